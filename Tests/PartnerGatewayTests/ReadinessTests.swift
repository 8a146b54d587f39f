import Foundation
import Testing
import TestSupport

/// The public `/readyz` says ready or not and nothing about Redis: no hosts or ports for
/// anyone who can reach the listener, and no Redis call per probe (a flood of probes must not
/// become a flood of `PING`s). The admin listener keeps the detail.
@Suite("Readiness: public /readyz and the admin status", .realProcesses)
struct ReadinessTests {
    /// How many `PING`s the gateway's Redis pool has sent, from its own metrics.
    private func pings(_ gateway: GatewayProcess) async throws -> Int {
        let text = try await DriverHTTP.call(gateway.adminURL + "/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix(#"gateway_redis_command_duration_seconds_count{command="PING"}"#) }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }

    @Test func publicReadyzNamesNoRedisAndSendsRedisNothing() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: TestConfig.yaml(redisURL: redis.url))
        let before = try await pings(gateway)
        for _ in 0..<20 {
            let ready = try await DriverHTTP.call(gateway.baseURL + "/readyz")
            #expect(ready.status == 200, "\(ready)")
            #expect(ready.text == #"{"status":"ready"}"#, "\(ready)")
            #expect(!ready.text.contains(String(redis.port)), "\(ready)")
        }
        let after = try await pings(gateway)
        #expect(after == before, "/readyz sent \(after - before) PINGs for 20 probes")
    }

    @Test func theAdminStatusKeepsTheTopologyBehindTheToken() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: TestConfig.yaml(redisURL: redis.url))
        let anonymous = try await DriverHTTP.call(gateway.adminURL + "/v1/status")
        #expect(anonymous.status == 401, "\(anonymous)")
        #expect(anonymous.code == "UNAUTHORIZED", "\(anonymous)")

        let status = try await DriverAPI.admin(gateway, .GET, "/v1/status")
        #expect(status.status == 200, "\(status)")
        #expect(status.string("status") == "ready", "\(status)")
        let detail = try #require(status.json["redis"] as? [String: Any], "\(status)")
        #expect(detail["mode"] as? String == "standalone")
        #expect(detail["primaries"] as? [String] == ["127.0.0.1:\(redis.port)"], "\(status)")
        #expect(detail["subscription"] as? String == "up", "\(status)")

        // Redis gone: both say so, the admin status still with its detail.
        await redis.stop()
        try await eventually(timeout: .seconds(5)) { try await DriverHTTP.call(gateway.baseURL + "/readyz").status == 503 }
        let down = try await DriverHTTP.call(gateway.baseURL + "/readyz")
        #expect(down.code == "SERVICE_UNAVAILABLE", "\(down)")
        #expect(down.isErrorShape, "\(down)")
        let notReady = try await DriverAPI.admin(gateway, .GET, "/v1/status")
        #expect(notReady.status == 200, "\(notReady)")
        #expect(notReady.string("status") == "not_ready", "\(notReady)")
        #expect((notReady.json["redis"] as? [String: Any])?["subscription"] as? String == "down", "\(notReady)")
    }
}
