import Foundation
import Testing
import TestSupport

/// `redis.wait_replicas: 1`: a logout, revocation or refresh rotation is answered only once a
/// replica confirmed it, so a failover cannot bring it back; without a replica it is a 503.
@Suite(.serialized, .timingSensitive) struct WaitReplicasTests {
    @Test func securityWritesWaitForAReplica() async throws {
        let primary = try await RedisServer()
        let replica = try await RedisServer(extraArguments: ["--replicaof", "127.0.0.1", String(primary.port)])
        func linked() async throws -> Bool {
            try await replica.cli("INFO", "replication").contains("master_link_status:up")
        }
        try await eventually(timeout: .seconds(10), interval: .milliseconds(20)) { try await linked() }
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: GatewayFlow.yaml(
            redisURL: primary.url, redisExtra: "wait_replicas: 1", timeout: "500ms", upstream: upstream
        ))
        try await GatewayFlow(gateway: gateway).run()

        let pair = try await DriverAPI.login(gateway, phone: "9876540001")
        let kept = try await DriverAPI.login(gateway, phone: "9876540003")
        await replica.stop()
        // No replica to confirm: the logout and the refresh are refused, not silently unsafe.
        let logout = try await DriverAPI.logout(gateway, access: pair.accessToken)
        #expect(logout.status == 503 && logout.code == "SERVICE_UNAVAILABLE", "\(logout)")
        #expect(logout.elapsed < .seconds(1), "\(logout.elapsed)")
        let refresh = try await DriverAPI.refresh(gateway, pair.refreshToken)
        #expect(refresh.status == 503, "\(refresh)")
        // Checking a token needs no Redis write, so bearer calls are still served.
        #expect(try await DriverAPI.profile(gateway, token: kept.accessToken).status == 200)

        try await replica.start()
        try await eventually(timeout: .seconds(10), interval: .milliseconds(20)) { try await linked() }
        let other = try await DriverAPI.login(gateway, phone: "9876540002")
        #expect(try await DriverAPI.logout(gateway, access: other.accessToken).status == 204)
        withExtendedLifetime(primary) {}
    }
}
