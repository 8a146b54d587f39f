import Foundation
import Testing
import TestSupport

/// The built binary's failure paths that need no gateway: exit codes and the one-line
/// stderr promise.
@Suite struct GatewayctlProcessTests {
    /// A port nobody listens on, so any request would fail with exit code 2.
    private let nowhere = "http://127.0.0.1:\(LoopbackPort.free())"

    @Test func unreachableGatewayExitsWithTwo() async throws {
        let result = try await Ctl.run(["partners", "list"], adminURL: nowhere, token: "t")
        #expect(result.status == 2, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines.count == 1, "\(result)")
        #expect(result.stderr.hasPrefix("error: cannot reach the gateway at \(nowhere): "), "\(result)")
    }

    @Test func noTokenExitsWithThreeBeforeAnyRequest() async throws {
        // Exit 3 rather than 2 against an unreachable URL: nothing was sent.
        let result = try await Ctl.run(["partners", "list", "--json"], adminURL: nowhere, token: nil)
        #expect(result.status == 3, "\(result)")
        #expect(result.stderrLines.count == 1, "\(result)")
        #expect(result.stderr.contains("GATEWAY_ADMIN_TOKEN"))
        #expect(result.stdout.isEmpty)
    }

    @Test(arguments: [["--grace", "ten"], ["--grace", "1.5h"], ["--grace", "-5s"], ["--grace", ""]])
    func badDurationsAreUsageErrors(_ grace: [String]) async throws {
        let result = try await Ctl.run(["keys", "rotate", "key_1"] + grace, adminURL: nowhere, token: "t")
        #expect(result.status == 64, "\(result)")
        #expect(result.stderrLines.count == 1, "\(result)")
        #expect(result.stderr.hasPrefix("error: "), "\(result)")
    }

    /// A token file others can read is used, with a warning on stderr naming it, as ssh
    /// warns of a key file others can read; a private one draws no warning.
    @Test func aTokenFileOthersCanReadDrawsAWarning() async throws {
        let folder = try TemporaryFolder("gatewayctl-token")
        defer { withExtendedLifetime(folder) {} }
        let directory = folder.url
        let open = directory.appendingPathComponent("open.token").path
        let closed = directory.appendingPathComponent("closed.token").path
        for path in [open, closed] { try "t0ken\n".write(toFile: path, atomically: true, encoding: .utf8) }
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: open)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: closed)

        let warned = try await Ctl.run(["partners", "list", "--admin-token-file", open], adminURL: nowhere, token: nil)
        #expect(warned.status == 2, "the token is still used: \(warned)")
        let warning = try #require(warned.stderrLines.first { $0.hasPrefix("warning: ") }, "\(warned)")
        #expect(warning.contains(open) && warning.contains("chmod 600"), "\(warned)")
        #expect(!warned.stderr.contains("t0ken"), "\(warned)")
        #expect(warned.stdout.isEmpty)

        let environment = try await Ctl.run(["partners", "list"], adminURL: nowhere, token: nil, environment: ["GATEWAY_ADMIN_TOKEN_FILE": open])
        #expect(environment.stderrLines.contains { $0.hasPrefix("warning: ") && $0.contains(open) }, "\(environment)")

        let quiet = try await Ctl.run(["partners", "list", "--admin-token-file", closed], adminURL: nowhere, token: nil)
        #expect(quiet.status == 2, "\(quiet)")
        #expect(quiet.stderrLines.count == 1, "\(quiet)")
        #expect(!quiet.stderr.contains("warning"), "\(quiet)")
    }

    @Test func helpGoesToStdoutAndSucceeds() async throws {
        let result = try await Ctl.run(["keys", "rotate", "--help"], adminURL: nowhere, token: nil)
        #expect(result.status == 0)
        #expect(result.stdout.contains("--grace <duration>"))
        #expect(result.stderr.isEmpty)
    }
}
