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

    @Test func helpGoesToStdoutAndSucceeds() async throws {
        let result = try await Ctl.run(["keys", "rotate", "--help"], adminURL: nowhere, token: nil)
        #expect(result.status == 0)
        #expect(result.stdout.contains("--grace <duration>"))
        #expect(result.stderr.isEmpty)
    }
}
