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
        let unconfirmed = try await DriverAPI.refresh(gateway, kept.refreshToken)
        #expect(unconfirmed.status == 503, "\(unconfirmed)")

        try await replica.start()
        try await eventually(timeout: .seconds(10), interval: .milliseconds(20)) { try await linked() }
        let other = try await DriverAPI.login(gateway, phone: "9876540002")
        #expect(try await DriverAPI.logout(gateway, access: other.accessToken).status == 204)
        // The refresh answered 503 did rotate the token on the primary; the app's retry with
        // the same token, within tokens.refresh_reuse_interval (10 s), is a retry: the
        // successor, which works. (The flow above made the first retry.)
        let retried = try DriverTokenPair(try await DriverAPI.refresh(gateway, kept.refreshToken))
        #expect(try await DriverAPI.profile(gateway, token: retried.accessToken).status == 200)
        let metrics = try await DriverHTTP.call(gateway.adminURL + "/metrics").text
        #expect(metrics.contains(#"gateway_token_refreshes_total{result="retried"} 2"#), "\(metrics.split(separator: "\n").filter { $0.contains("refreshes") })")
        withExtendedLifetime(primary) {}
    }

    /// Sentinel with `wait_replicas: 1`: a key revocation, a logout, a user revocation and a
    /// refresh rotation answered just before the primary is killed all survive the failover.
    /// Checked on the running gateway and on one started after the failover, which knows only
    /// what the promoted Redis holds (the running one also keeps revocations in memory).
    ///
    /// Between the promotion and the old primary's return as a replica nothing can confirm a
    /// write: those answer 503 within the timeout while reads and bearer calls are served.
    @Test func answeredRevocationsSurviveASentinelFailover() async throws {
        let scenario = try await RevocationsAcrossFailover(waitReplicas: 1)
        defer { scenario.upstream.stop() }
        let gateway = scenario.gateway
        let group = scenario.group
        let loggedOutLater = try await DriverAPI.login(gateway, phone: "9876520005")
        try await scenario.revokeEverything()
        let (promoted, ready) = try await scenario.killPrimary()

        // Promoted, with no replica left: every write that must be confirmed is a 503 within
        // the timeout (500 ms); reads, bearer calls and rate limits go on.
        let writes: [(String, DriverResponse)] = [
            ("logout", try await DriverAPI.logout(gateway, access: loggedOutLater.accessToken)),
            ("refresh", try await DriverAPI.refresh(gateway, scenario.kept.refreshToken)),
            ("otp trigger", try await DriverAPI.trigger(gateway, phone: "9876520006")),
            ("sdk mint", try await DriverAPI.mint(gateway, key: scenario.liveKey, phone: "9876520007", driverID: "NY-7")),
            ("key revocation", try await DriverAPI.admin(gateway, .POST, "/v1/keys/\(scenario.revokedKeyID)/revoke")),
        ]
        for (name, answer) in writes {
            #expect(answer.status == 503 && answer.isErrorShape, "\(name) without a replica: \(answer)")
            #expect(answer.elapsed < .seconds(1), "\(name) took \(answer.elapsed)")
        }
        #expect(try await GatewayFlow.whoami(gateway, key: scenario.liveKey).status == 200)
        #expect(try await DriverAPI.profile(gateway, token: scenario.kept.accessToken).status == 200)
        let limited = try await DriverHTTP.call(gateway.baseURL + "/limited/x", headers: [("Authorization", "Bearer \(scenario.kept.accessToken)")])
        #expect(limited.status == 200, "a rate-limited route: \(limited)")
        #expect(try await DriverAPI.admin(gateway, .GET, "/v1/partners/\(scenario.partnerID)/keys").status == 200)
        #expect(try await DriverHTTP.call(gateway.baseURL + "/readyz").status == 200)

        // The old primary comes back empty as the new primary's replica, and writes are
        // confirmed again. (Pointed there at once, as an operator's start-up would: the
        // sentinels would do the same, but only at their next 10 s look at it.)
        let clock = ContinuousClock()
        let restarted = clock.now
        try await group.primary.start()
        _ = try await group.primary.cli("REPLICAOF", "127.0.0.1", String(group.replica.port))
        try await eventually(timeout: .seconds(60), interval: .milliseconds(50)) {
            try await group.replica.cli("INFO", "replication").contains("port=\(group.primary.port),state=online")
        }
        let rejoined = clock.now - restarted
        // Writes are confirmed again once the rejoined replica acknowledges `WAIT`, which on a
        // loaded machine can take a moment after it reports itself online: await the first
        // confirmed write (an OTP trigger, a new phone each try so no limit is involved).
        var tries = 0
        try await eventually(timeout: .seconds(20), interval: .milliseconds(100)) {
            tries += 1
            return try await DriverAPI.trigger(gateway, phone: "98765201\(tries % 10)\(tries / 10 % 10)").status == 200
        }
        let other = try await DriverAPI.login(gateway, phone: "9876520008")
        #expect(try await DriverAPI.logout(gateway, access: other.accessToken).status == 204)
        print("sentinel failover with wait_replicas 1: replica promoted \(promoted) after the kill, /readyz 200 after \(ready); the restarted old primary was a replica again \(rejoined) after its start")

        let fresh = try await GatewayProcess(yaml: scenario.yaml)
        #expect(try await scenario.acceptedAgain(on: fresh) == [], "a gateway started after the failover")
        #expect(try await scenario.acceptedAgain(on: gateway) == [], "the running gateway")
        // The fresh gateway refused the spent token as reuse: the rotation survived, not
        // merely an unknown token.
        let metrics = try await DriverHTTP.call(fresh.adminURL + "/metrics").text
        #expect(metrics.contains("gateway_token_refreshes_total{result=\"reused\"} 1"), "\(metrics.split(separator: "\n").filter { $0.contains("refreshes") })")
    }

    /// What `wait_replicas: 0` does not guarantee, shown: with the replica cut off (it cannot
    /// re-authenticate to the primary), the four revocations are answered as done, the primary
    /// dies, and the promoted replica never had them, so a gateway started afterwards accepts
    /// all of them again.
    @Test func withoutWaitingAFailoverCanUndoAnsweredRevocations() async throws {
        let scenario = try await RevocationsAcrossFailover(waitReplicas: 0)
        defer { scenario.upstream.stop() }
        let replica = scenario.group.replica
        #expect(try await replica.cli("CONFIG", "SET", "masterauth", "not-the-primarys") == "OK")
        #expect(try await replica.cli("CLIENT", "KILL", "TYPE", "master") == "1")
        try await eventually(timeout: .seconds(10), interval: .milliseconds(20)) {
            try await replica.cli("INFO", "replication").contains("master_link_status:down")
        }
        try await scenario.revokeEverything()
        _ = try await scenario.killPrimary()

        let fresh = try await GatewayProcess(yaml: scenario.yaml)
        #expect(try await scenario.acceptedAgain(on: fresh) == [
            "revoked key", "logged-out access token", "logged-out refresh token",
            "revoked user's access token", "revoked user's refresh token", "spent refresh token",
        ])
    }
}
