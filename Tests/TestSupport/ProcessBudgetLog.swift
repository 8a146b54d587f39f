import Foundation
import Synchronization
import Testing

/// Where the suite's time goes: with `PG_BUDGET_LOG` naming a file, every test run under the
/// ``ProcessBudget`` appends a line `seconds<TAB>weight<TAB>test` when it gives its slots back.
/// Sorted, it lists the tests that hold the budget longest (a `timingSensitive` test holds all
/// of it, so its seconds count for every slot).
public final class ProcessBudgetLog: Sendable {
    public static let shared: ProcessBudgetLog? = ProcessInfo.processInfo.environment["PG_BUDGET_LOG"].flatMap {
        $0.isEmpty ? nil : ProcessBudgetLog(path: $0)
    }

    private let handle: Mutex<FileHandle?>

    private init?(path: String) {
        if !FileManager.default.fileExists(atPath: path) { FileManager.default.createFile(atPath: path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: path) else { return nil }
        handle.seekToEndOfFile()
        self.handle = Mutex(handle)
    }

    func record(_ test: Test, weight: Int, held: Duration) {
        let seconds = Double(held.components.seconds) + Double(held.components.attoseconds) / 1e18
        let line = String(format: "%.2f\t%d\t", seconds, min(weight, ProcessBudget.shared.slots)) + test.id.description + "\n"
        handle.withLock { $0?.write(Data(line.utf8)) }
    }
}
