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
enum Ctl {
    static var path: String { BuiltProduct.path("gatewayctl") }

    /// `token: nil` leaves GATEWAY_ADMIN_TOKEN unset. Any GATEWAY_* variables of the
    /// environment the tests run in are dropped so they cannot leak in, and the profile file
    /// is looked for in an empty directory unless `environment` sets XDG_CONFIG_HOME; the
    /// rest of `environment` is added (an empty value removes a variable).
    static func run(_ arguments: [String], adminURL: String?, token: String?, stdin: String? = nil, environment extra: [String: String] = [:]) async throws -> CtlResult {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("GATEWAY_") }
        environment["GATEWAY_ADMIN_URL"] = adminURL
        environment["GATEWAY_ADMIN_TOKEN"] = token
        environment["XDG_CONFIG_HOME"] = FileManager.default.temporaryDirectory.appendingPathComponent("gatewayctl-tests-no-config").path
        for (name, value) in extra { environment[name] = value.isEmpty ? nil : value }
        let result = try await ShortCommand.run(path, arguments, environment: environment, standardInput: stdin.map { Data($0.utf8) })
        return CtlResult(arguments: arguments, status: result.status, stdout: result.stdout, stderr: result.stderr)
    }

    /// Runs gatewayctl on a pseudo-terminal (util-linux `script`), typing `answer` into it, as
    /// a person at a terminal would; stdout and stderr arrive together, as on a screen.
    static func runOnTerminal(_ arguments: [String], adminURL: String, token: String, answer: String) async throws -> CtlResult {
        let command = ([path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("GATEWAY_") }
        environment["GATEWAY_ADMIN_URL"] = adminURL
        environment["GATEWAY_ADMIN_TOKEN"] = token
        environment["XDG_CONFIG_HOME"] = FileManager.default.temporaryDirectory.appendingPathComponent("gatewayctl-tests-no-config").path
        let result = try await ShortCommand.run("/usr/bin/script", ["-qec", command, "/dev/null"], environment: environment, standardInput: Data(answer.utf8))
        return CtlResult(arguments: arguments, status: result.status, stdout: result.stdout, stderr: result.stderr)
    }
}
