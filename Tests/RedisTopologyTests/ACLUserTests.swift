import Foundation
import Testing
import TestSupport

/// The gateway as a Redis ACL user holding exactly the rule docs/redis.md documents: every
/// flow works, and the start-up checks run with it. The rule is read from the document itself,
/// so the document cannot drift from what is tested.
@Suite(.serialized, .realProcesses) struct ACLUserTests {
    static let password = "acl-test-password-0123456789"

    /// The `ACL SETUSER gateway ...` line of docs/redis.md, split into arguments, with the
    /// password placeholder filled in.
    static func documentedRule() throws -> [String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/redis.md"), encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("ACL SETUSER gateway ") })
        return line.split(separator: " ").map {
            $0 == ">$GATEWAY_REDIS_PASSWORD" ? ">\(password)" : String($0)
        }
    }

    /// A Redis with the documented user, and a gateway logging in as it with `password` (and
    /// its upstream): the processes live as long as the caller holds them.
    private static func gatewayAsACLUser(password: String, waitUntilListening: Bool = true) async throws -> (RedisServer, GatewayProcess, EchoUpstreamProcess) {
        let redis = try await RedisServer()
        let created = try await ShortCommand.run("/usr/bin/redis-cli", ["-p", String(redis.port)] + (try documentedRule()))
        #expect(created.stdout.contains("OK"), "\(created.stdout) \(created.stderr)")
        let upstream = try await EchoUpstreamProcess()
        let gateway = try await GatewayProcess(
            yaml: GatewayFlow.yaml(
                redisURL: "redis://gateway@127.0.0.1:\(redis.port)/0",
                redisExtra: "password_env: GATEWAY_REDIS_PASSWORD",
                upstream: upstream
            ),
            environment: ["GATEWAY_REDIS_PASSWORD": password],
            waitUntilListening: waitUntilListening
        )
        return (redis, gateway, upstream)
    }

    @Test func everyFlowWorksAsAUserLimitedToTheDocumentedRule() async throws {
        let (redis, gateway, upstream) = try await Self.gatewayAsACLUser(password: Self.password)
        defer { upstream.stop() }
        try await GatewayFlow(gateway: gateway).run()
        // The eviction-policy check ran (through INFO: CONFIG is not in the rule), so no
        // warning that it could not.
        #expect(!gateway.log.contains("cannot check redis maxmemory-policy"), "\(gateway.log)")
        // Nothing the gateway sent was refused.
        let aclLog = try await redis.cli("ACL", "LOG")
        #expect(aclLog.isEmpty, "ACL LOG: \(aclLog)")
    }

    @Test func aWrongPasswordStopsStartUpWithOneLine() async throws {
        let (redis, gateway, upstream) = try await Self.gatewayAsACLUser(password: "not-the-password", waitUntilListening: false)
        defer {
            upstream.stop()
            withExtendedLifetime(redis) {}
        }
        #expect(try await gateway.process.waitForExit(timeout: .seconds(20)) == 1)
        let lines = gateway.log.split(whereSeparator: \.isNewline)
        #expect(lines.count == 1 && lines[0].contains("refused the gateway's credentials"), "\(gateway.log)")
        #expect(!gateway.log.contains("not-the-password"))
    }
}
