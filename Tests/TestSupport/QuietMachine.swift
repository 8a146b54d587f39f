import Foundation

/// When the machine is quiet enough for tests that assert wall-clock bounds.
///
/// `scripts/test.sh` runs its other checks (the API checks, the browser, the fuzzers) beside
/// `swift test` and names, in `PG_TIMING_TESTS_AFTER`, a file it creates once they have all
/// ended. Until then `.timingSensitive` tests wait, before they queue for the
/// ``ProcessBudget``, while in-memory and `.realProcesses` tests run beside those checks.
/// Without the variable there is nothing to wait for.
enum QuietMachine {
    static let marker: String? = ProcessInfo.processInfo.environment["PG_TIMING_TESTS_AFTER"].flatMap { $0.isEmpty ? nil : $0 }

    /// Returns once the marker exists (at once without one).
    static func wait() async throws {
        guard let marker else { return }
        while !FileManager.default.fileExists(atPath: marker) {
            try await Task.sleep(for: .milliseconds(200))
        }
    }
}
