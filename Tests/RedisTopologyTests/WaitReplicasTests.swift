import Foundation
import Testing
import TestSupport

/// `redis.wait_replicas: 1`: a logout, revocation or refresh rotation is answered only once a
/// replica confirmed it, so a failover cannot bring it back; without a replica it is a 503.
@Suite(.serialized) struct WaitReplicasTests {
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

    /// Sentinel (1 primary, 1 replica, 3 sentinels) with `wait_replicas: 1`: a key revocation,
    /// a logout, a user revocation and a refresh rotation answered just before the primary is
    /// killed all survive the failover. Checked on the running gateway and on one started
    /// after the failover, which knows only what the promoted Redis holds (the running one
    /// also keeps revocations in memory).
    ///
    /// Between the promotion and the old primary's return as a replica nothing can confirm a
    /// write: those answer 503 within the timeout while reads and bearer calls are served.
    @Test func answeredRevocationsSurviveASentinelFailover() async throws {
        let group = try await RedisSentinelGroup()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        // A strict refresh rule (no retry window), so the spent refresh token presented again
        // is reuse however long the failover takes.
        let yaml = GatewayFlow.yaml(
            redisURL: "redis://127.0.0.1:1/0", redisExtra: group.yaml + "\nwait_replicas: 1", timeout: "500ms", upstream: upstream
        ) + "tokens: {refresh_reuse_interval: 0}\n"
        let gateway = try await GatewayProcess(yaml: yaml)
        try await eventually(timeout: .seconds(20), interval: .milliseconds(50)) {
            try await DriverHTTP.call(gateway.baseURL + "/readyz").status == 200
        }
        let partnerID = try await DriverAPI.createPartner(gateway, name: "DurableCo")
        let revokedKey = try await DriverAPI.createKey(gateway, partnerID: partnerID)
        let liveKey = try await DriverAPI.createKey(gateway, partnerID: partnerID)
        let revokedKeyID = try #require(try await Self.whoami(gateway, key: revokedKey).string("key_id"))
        let loggedOut = try await DriverAPI.login(gateway, phone: "9876520001")
        let revokedUser = try await DriverAPI.login(gateway, phone: "9876520002")
        let spent = try await DriverAPI.login(gateway, phone: "9876520003")
        let kept = try await DriverAPI.login(gateway, phone: "9876520004")
        let refusedLater = try await DriverAPI.login(gateway, phone: "9876520005")

        // The four writes a failover must not undo, each answered only once the replica
        // confirmed it; then the primary dies at once, with no chance to pass on anything more.
        let revokeKey = try await DriverAPI.admin(gateway, .POST, "/v1/keys/\(revokedKeyID)/revoke")
        #expect(revokeKey.status == 200, "revoke key: \(revokeKey)")
        let logout = try await DriverAPI.logout(gateway, access: loggedOut.accessToken)
        #expect(logout.status == 204, "logout: \(logout)")
        let revokeUser = try await DriverAPI.admin(gateway, .POST, "/v1/users/\(revokedUser.userID)/revoke-sessions")
        #expect(revokeUser.status == 200, "revoke user: \(revokeUser)")
        let rotated = try await DriverAPI.refresh(gateway, spent.refreshToken)
        #expect(rotated.status == 200, "refresh: \(rotated)")
        let clock = ContinuousClock()
        let killed = clock.now
        group.primary.kill()

        try await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            try await group.primaryPort() == group.replica.port
        }
        let promoted = clock.now - killed
        try await eventually(timeout: .seconds(20), interval: .milliseconds(50)) {
            try await DriverHTTP.call(gateway.baseURL + "/readyz").status == 200
        }
        let ready = clock.now - killed

        // Promoted, with no replica left: every write that must be confirmed is a 503 within
        // the timeout (500 ms); reads, bearer calls and rate limits go on.
        let writes: [(String, DriverAnswer)] = [
            ("logout", try await DriverAPI.logout(gateway, access: refusedLater.accessToken)),
            ("refresh", try await DriverAPI.refresh(gateway, kept.refreshToken)),
            ("otp trigger", try await DriverAPI.trigger(gateway, phone: "9876520006")),
            ("sdk mint", try await DriverAPI.mint(gateway, key: liveKey, phone: "9876520007", driverID: "NY-7")),
            ("key revocation", try await DriverAPI.admin(gateway, .POST, "/v1/keys/\(revokedKeyID)/revoke")),
        ]
        for (name, answer) in writes {
            #expect(answer.status == 503 && answer.isErrorShape, "\(name) without a replica: \(answer)")
            #expect(answer.elapsed < .seconds(1), "\(name) took \(answer.elapsed)")
        }
        #expect(try await Self.whoami(gateway, key: liveKey).status == 200)
        #expect(try await DriverAPI.profile(gateway, token: kept.accessToken).status == 200)
        let limited = try await DriverHTTP.call(gateway.baseURL + "/limited/x", headers: [("Authorization", "Bearer \(kept.accessToken)")])
        #expect(limited.status == 200, "a rate-limited route: \(limited)")
        #expect(try await DriverAPI.admin(gateway, .GET, "/v1/partners/\(partnerID)/keys").status == 200)

        // The old primary comes back empty; the sentinels make it the new primary's replica,
        // and writes are confirmed again.
        try await group.primary.start()
        try await eventually(timeout: .seconds(60), interval: .milliseconds(50)) {
            try await group.replica.cli("INFO", "replication").contains("port=\(group.primary.port),state=online")
        }
        let rejoined = clock.now - killed
        let other = try await DriverAPI.login(gateway, phone: "9876520008")
        #expect(try await DriverAPI.logout(gateway, access: other.accessToken).status == 204)
        print("sentinel failover with wait_replicas 1: replica promoted \(promoted) after the kill, /readyz 200 after \(ready), old primary back as a replica after \(rejoined)")

        let fresh = try await GatewayProcess(yaml: yaml)
        for (name, instance) in [("a gateway started after the failover", fresh), ("the running gateway", gateway)] {
            // What was never revoked still works, so the refusals below are not an outage.
            #expect(try await Self.whoami(instance, key: liveKey).status == 200, "\(name): live key")
            #expect(try await DriverAPI.profile(instance, token: kept.accessToken).status == 200, "\(name): kept session")
            // Nothing revoked works again.
            #expect(try await Self.whoami(instance, key: revokedKey).status == 401, "\(name): revoked key")
            #expect(try await DriverAPI.profile(instance, token: loggedOut.accessToken).status == 401, "\(name): logged-out access token")
            #expect(try await DriverAPI.refresh(instance, loggedOut.refreshToken).status == 401, "\(name): logged-out refresh token")
            #expect(try await DriverAPI.profile(instance, token: revokedUser.accessToken).status == 401, "\(name): revoked user's access token")
            #expect(try await DriverAPI.refresh(instance, revokedUser.refreshToken).status == 401, "\(name): revoked user's refresh token")
            #expect(try await DriverAPI.refresh(instance, spent.refreshToken).status == 401, "\(name): spent refresh token")
        }
        // The fresh gateway refused the spent token as reuse: the rotation survived, not
        // merely an unknown token.
        let metrics = try await DriverHTTP.call(fresh.adminURL + "/metrics").text
        #expect(metrics.contains("gateway_token_refreshes_total{result=\"reused\"} 1"), "\(metrics.split(separator: "\n").filter { $0.contains("refreshes") })")
    }

    private static func whoami(_ gateway: GatewayProcess, key: String) async throws -> DriverAnswer {
        try await DriverHTTP.call(gateway.baseURL + "/partner/v1/whoami", headers: [("X-API-Key", key)])
    }
}
