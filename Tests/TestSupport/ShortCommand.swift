import Foundation

/// What a short-lived command printed and how it exited.
public struct ShortCommandResult: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String
}

/// Runs short-lived helper commands (`redis-cli`, `python3`, the `gatewayctl` binary) and
/// collects their output.
///
/// Foundation's `Process` is fine for these (unlike for the servers `ChildProcess` starts):
/// they never need a signal. The blocking reads and wait happen on a Dispatch thread, never on
/// Swift concurrency's cooperative pool: on a 2-core machine a blocked cooperative thread
/// stalls every other test's Redis replies past their deadlines.
public enum ShortCommand {
    /// - Parameters:
    ///   - environment: the child's whole environment; nil inherits the test process's.
    ///   - standardInput: written to the child's stdin, which is then closed; nil gives it
    ///     /dev/null.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, standardInput: Data? = nil) async throws -> ShortCommandResult {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try runBlocking(executable, arguments, environment: environment, standardInput: standardInput) })
            }
        }
    }

    private static func runBlocking(_ executable: String, _ arguments: [String], environment: [String: String]?, standardInput: Data?) throws -> ShortCommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        let input = standardInput.map { _ in Pipe() }
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
        if let input, let standardInput {
            // Small inputs (a key, a line): they fit the pipe's buffer, so this cannot block.
            input.fileHandleForWriting.write(standardInput)
            try input.fileHandleForWriting.close()
        }
        // stderr is drained on another thread so that neither pipe can fill up and stall the
        // child while the other is being read.
        let errorData = LockedData()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            errorData.set(stderr.fileHandleForReading.readDataToEndOfFile())
        }
        let outputData = stdout.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return ShortCommandResult(
            status: process.terminationStatus,
            stdout: String(decoding: outputData, as: UTF8.self),
            stderr: String(decoding: errorData.get(), as: UTF8.self)
        )
    }
}

private final class LockedData: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var data = Data()

    func set(_ value: Data) { lock.withLock { data = value } }
    func get() -> Data { lock.withLock { data } }
}
