import Foundation
import Testing
import TestSupport

/// A gateway behind Sentinel (1 primary, 1 replica, 3 sentinels) holding one of each thing a
/// failover must not bring back: a revoked partner key, a logged-out session, a revoked user
/// and a spent refresh token, made just before the primary is killed.
///
/// The refresh rule is strict (`refresh_reuse_interval: 0`), so the spent token presented
/// again is reuse however long the failover takes, and is accepted only if its rotation was
/// lost.
struct RevocationsAcrossFailover {
    let group: RedisSentinelGroup
    let upstream: EchoUpstreamProcess
    /// The configuration, for a second gateway started after the failover.
    let yaml: String
    let gateway: GatewayProcess
    let partnerID: String
    let revokedKey: String
    let revokedKeyID: String
    /// A key of the same partner that nobody revokes.
    let liveKey: String
    let loggedOut: DriverTokenPair
    let revokedUser: DriverTokenPair
    let spent: DriverTokenPair
    /// A session nobody ends.
    let kept: DriverTokenPair

    /// The group, a gateway with `wait_replicas` and the keys and sessions; nothing revoked yet.
    init(waitReplicas: Int) async throws {
        group = try await RedisSentinelGroup()
        upstream = try await EchoUpstreamProcess()
        // The URL's host and port are not used with Sentinel; only its scheme, user and db.
        yaml = GatewayFlow.yaml(
            redisURL: "redis://127.0.0.1:1/0", redisExtra: group.yaml + "\nwait_replicas: \(waitReplicas)",
            timeout: "500ms", upstream: upstream
        ) + "tokens: {refresh_reuse_interval: 0}\n"
        gateway = try await GatewayProcess(yaml: yaml)
        partnerID = try await DriverAPI.createPartner(gateway, name: "DurableCo")
        revokedKey = try await DriverAPI.createKey(gateway, partnerID: partnerID)
        liveKey = try await DriverAPI.createKey(gateway, partnerID: partnerID)
        let whoami = try await GatewayFlow.whoami(gateway, key: revokedKey)
        revokedKeyID = try #require(whoami.string("key_id"), "\(whoami)")
        loggedOut = try await DriverAPI.login(gateway, phone: "9876520001")
        revokedUser = try await DriverAPI.login(gateway, phone: "9876520002")
        spent = try await DriverAPI.login(gateway, phone: "9876520003")
        kept = try await DriverAPI.login(gateway, phone: "9876520004")
    }

    /// The four writes, each of which must be answered as done.
    func revokeEverything() async throws {
        let revokeKey = try await DriverAPI.admin(gateway, .POST, "/v1/keys/\(revokedKeyID)/revoke")
        #expect(revokeKey.status == 200, "revoke key: \(revokeKey)")
        let logout = try await DriverAPI.logout(gateway, access: loggedOut.accessToken)
        #expect(logout.status == 204, "logout: \(logout)")
        let revokeUser = try await DriverAPI.admin(gateway, .POST, "/v1/users/\(revokedUser.userID)/revoke-sessions")
        #expect(revokeUser.status == 200, "revoke user: \(revokeUser)")
        let rotated = try await DriverAPI.refresh(gateway, spent.refreshToken)
        #expect(rotated.status == 200, "refresh: \(rotated)")
    }

    /// Kills the primary (SIGKILL: it passes on nothing more) and returns once the sentinels
    /// name the replica and the gateway's `/readyz` answers 200 again: how long each took.
    func killPrimary() async throws -> (promoted: Duration, ready: Duration) {
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
        return (promoted, clock.now - killed)
    }

    /// Which of the four things revoked before the kill `instance` accepts again (empty when
    /// none is). Expects the key and session nobody revoked to be accepted, so a refusal is
    /// not an outage.
    func acceptedAgain(on instance: GatewayProcess) async throws -> [String] {
        #expect(try await GatewayFlow.whoami(instance, key: liveKey).status == 200, "live key")
        #expect(try await DriverAPI.profile(instance, token: kept.accessToken).status == 200, "kept session")
        var accepted: [String] = []
        if try await GatewayFlow.whoami(instance, key: revokedKey).status == 200 { accepted.append("revoked key") }
        if try await DriverAPI.profile(instance, token: loggedOut.accessToken).status == 200 { accepted.append("logged-out access token") }
        if try await DriverAPI.refresh(instance, loggedOut.refreshToken).status == 200 { accepted.append("logged-out refresh token") }
        if try await DriverAPI.profile(instance, token: revokedUser.accessToken).status == 200 { accepted.append("revoked user's access token") }
        if try await DriverAPI.refresh(instance, revokedUser.refreshToken).status == 200 { accepted.append("revoked user's refresh token") }
        if try await DriverAPI.refresh(instance, spent.refreshToken).status == 200 { accepted.append("spent refresh token") }
        return accepted
    }
}
