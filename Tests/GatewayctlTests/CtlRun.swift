import Foundation
import TestSupport

/// What one `gatewayctl` run produced.
struct CtlResult: CustomStringConvertible {
    let arguments: [String]
    let status: Int32
    let stdout: String
    let stderr: String

    /// stderr's non-empty lines: an error must be exactly one.
    var stderrLines: [Substring] { stderr.split(separator: "\n") }

    var description: String {
        "gatewayctl \(arguments.joined(separator: " ")) → exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)"
    }

    /// stdout parsed as the one JSON document `--json` promises.
    func json() throws -> Any {
        try JSONSerialization.jsonObject(with: Data(stdout.utf8), options: [.fragmentsAllowed])
    }

    func object() throws -> [String: Any] {
        guard let object = try json() as? [String: Any] else { throw NotJSON(result: self, expected: "an object") }
        return object
    }

    func array() throws -> [[String: Any]] {
        guard let array = try json() as? [[String: Any]] else { throw NotJSON(result: self, expected: "an array of objects") }
        return array
    }
}

struct NotJSON: Error, CustomStringConvertible {
    let result: CtlResult
    let expected: String
    var description: String { "expected \(expected) on stdout: \(result)" }
}

/// Runs the built `gatewayctl` binary, the one users run, and captures its output.
///
/// Foundation's `Process` is fine here (unlike for the servers `ChildProcess` starts): the
/// command is short-lived and never needs a signal.
enum Ctl {
    static var path: String { BuiltProduct.path("gatewayctl") }

    /// `token: nil` leaves GATEWAY_ADMIN_TOKEN unset. Any GATEWAY_* variables of the
    /// environment the tests run in are dropped so they cannot leak in.
    static func run(_ arguments: [String], adminURL: String, token: String?) async throws -> CtlResult {
        var variables = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("GATEWAY_") }
        variables["GATEWAY_ADMIN_URL"] = adminURL
        variables["GATEWAY_ADMIN_TOKEN"] = token
        let environment = variables
        let executable = path
        // The reads block, so they happen off Swift concurrency's small thread pool.
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    try runBlocking(executable, arguments, environment: environment)
                })
            }
        }
    }

    private static func runBlocking(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> CtlResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        try process.run()
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
        return CtlResult(
            arguments: arguments,
            status: process.terminationStatus,
            stdout: String(decoding: outputData, as: UTF8.self),
            stderr: String(decoding: errorData.get(), as: UTF8.self)
        )
    }
}

private final class LockedData: @unchecked Sendable {
    // @unchecked: `data` is only touched under `lock`.
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.withLock { data = value } }
    func get() -> Data { lock.withLock { data } }
}
