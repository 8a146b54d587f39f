@testable import GatewayObservability
import Foundation
import Testing

/// Runs `body` with a ``LogOutput`` on a new file and a way to read what the file holds; the
/// file is removed afterwards.
func withTemporaryLogFile(_ body: (LogOutput, () -> String) async throws -> Void) async throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("pg-log-\(UUID().uuidString).log").path
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    try #require(descriptor >= 0)
    defer {
        close(descriptor)
        unlink(path)
    }
    try await body(LogOutput(descriptor: descriptor)) { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
}
