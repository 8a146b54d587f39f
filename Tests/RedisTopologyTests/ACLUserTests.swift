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
    /// its upstream): the processes live as long as the caller holds them. With `tls`, Redis
    /// speaks only TLS and the gateway connects by `rediss://`, as to a managed Redis.
    private static func gatewayAsACLUser(
        password: String, tls: Bool = false, redisArguments: [String] = [], waitUntilListening: Bool = true
    ) async throws -> (RedisServer, GatewayProcess, EchoUpstreamProcess) {
        let certificates = tls ? try await RedisTestCertificates() : nil
        let redis = try await RedisServer(tls: certificates, extraArguments: redisArguments)
        let created = try await redis.cli(arguments: try documentedRule())
        #expect(created == "OK", "ACL SETUSER: \(created)")
        let upstream = try await EchoUpstreamProcess()
        var redisExtra = "password_env: GATEWAY_REDIS_PASSWORD"
        if let certificates {
            redisExtra += "\ntls: {ca_file: \(certificates.caFile), server_name: localhost}"
        }
        let gateway = try await GatewayProcess(
            yaml: GatewayFlow.yaml(
                redisURL: redis.url.replacingOccurrences(of: "://", with: "://gateway@"),
                redisExtra: redisExtra,
                upstream: upstream
            ),
            environment: ["GATEWAY_REDIS_PASSWORD": password],
            waitUntilListening: waitUntilListening
        )
        return (redis, gateway, upstream)
    }

    @Test(arguments: [false, true])
    func everyFlowWorksAsAUserLimitedToTheDocumentedRule(tls: Bool) async throws {
        let (redis, gateway, upstream) = try await Self.gatewayAsACLUser(password: Self.password, tls: tls)
        defer { upstream.stop() }
        try await GatewayFlow(gateway: gateway).run()
        // The eviction-policy check ran (through INFO: CONFIG is not in the rule), so no
        // warning that it could not.
        #expect(!gateway.log.contains("maxmemory-policy"), "\(gateway.log)")
        // Nothing the gateway sent was refused.
        let aclLog = try await redis.cli("ACL", "LOG")
        #expect(aclLog.isEmpty, "ACL LOG: \(aclLog)")
        #expect(!gateway.log.contains(Self.password))
    }

    /// The start-up check really reads the policy as the user (by `INFO memory`; `CONFIG` is
    /// not in the rule): a Redis that may evict is refused with one line.
    @Test func theStartUpCheckRefusesAnEvictingRedisAsTheUser() async throws {
        let (redis, gateway, upstream) = try await Self.gatewayAsACLUser(
            password: Self.password, redisArguments: ["--maxmemory-policy", "allkeys-lru"], waitUntilListening: false
        )
        defer { upstream.stop() }
        #expect(try await gateway.process.waitForExit(timeout: .seconds(20)) == 1)
        let lines = gateway.log.split(whereSeparator: \.isNewline)
        #expect(lines.count == 1 && lines[0].contains("redis maxmemory-policy is") && lines[0].contains("allkeys-lru"), "\(gateway.log)")
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
