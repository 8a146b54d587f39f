import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// Admin "revoke every session" and signing-key rotation across two gateway processes that
/// share one Redis.
@Suite("Driver sessions across gateway instances", .serialized, .timingSensitive)
struct DriverSessionRevocationTests {
    /// A revocation cut short after its first step (the session listed as pending and
    /// published, its family untouched): the session's access tokens are refused at once, and
    /// the next refresh completes the revocation instead of extending the session.
    @Test func aRevocationCutShortIsCompletedByTheNextRefresh() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, upstream: upstream))
        let login = try await DriverAPI.login(gateway, phone: "9876512347")
        let session = try #require(login.sessionID)
        try await redis.cli("ZADD", "pg:revoked-sessions", "1000000000000000", session)
        try await redis.cli("PUBLISH", "pg:invalidate", "session \(session) \(Int64(Date().timeIntervalSince1970 * 1000))")
        try await eventually(timeout: .seconds(2), interval: .milliseconds(10)) {
            try await DriverAPI.profile(gateway, token: login.accessToken).status == 401
        }
        let refresh = try await DriverAPI.refresh(gateway, login.refreshToken)
        #expect(refresh.status == 401, "\(refresh)")
        #expect(refresh.code == "INVALID_TOKEN")
        #expect(try await redis.cli("HGET", "pg:rtfam:{\(session)}", "state") == "revoked")
        let score = try await redis.cli("ZSCORE", "pg:revoked-sessions", session)
        #expect(score != "1000000000000000" && Int64(score) != nil, "\(score)")
    }

    @Test func adminRevocationReachesASecondInstanceWithinOneSecond() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let yaml = DriverYAML.make(redis: redis, upstream: upstream)
        let first = try await GatewayProcess(yaml: yaml)
        let second = try await GatewayProcess(yaml: yaml)
        let phone = "9876512345"
        let bystanderPhone = "9876512346"

        // Two sessions of the user (one through each instance) and another user.
        let sessionA = try await DriverAPI.login(gateway: first, phone: phone)
        let sessionB = try await DriverAPI.login(gateway: second, phone: phone)
        let refreshedA = try DriverTokenPair(try await DriverAPI.refresh(second, sessionA.refreshToken))
        let bystander = try await DriverAPI.login(gateway: first, phone: bystanderPhone)
        #expect(sessionA.userID == sessionB.userID)
        let userID = sessionA.userID
        let accessTokens = [sessionA.accessToken, sessionB.accessToken, refreshedA.accessToken]
        // Both instances accept every token (and now hold them in their verified caches).
        for gateway in [first, second] {
            for token in accessTokens + [bystander.accessToken] {
                #expect(try await DriverAPI.profile(gateway, token: token).status == 200)
            }
        }

        // Unknown users.
        for unknown in ["usr_000000000000000000000000", "usr_nope", "nobody"] {
            let answer = try await DriverAPI.admin(first, .POST, "/v1/users/\(unknown)/revoke-sessions")
            #expect(answer.status == 404, "\(unknown): \(answer)")
            #expect(answer.code == "NOT_FOUND")
            #expect(answer.isErrorShape)
        }
        // Without the admin token.
        let unauthorized = try await DriverHTTP.call(first.adminURL + "/v1/users/\(userID)/revoke-sessions", method: .POST)
        #expect(unauthorized.status == 401)

        let requestedAt = Date()
        let revoked = try await DriverAPI.admin(first, .POST, "/v1/users/\(userID)/revoke-sessions")
        let clock = ContinuousClock()
        let revokedAtClock = clock.now
        #expect(revoked.status == 200, "\(revoked)")
        #expect(Set(revoked.json.keys) == ["user_id", "revoked_at"])
        #expect(revoked.string("user_id") == userID)
        let revokedAtText = try #require(revoked.string("revoked_at"))
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let plain = ISO8601DateFormatter()
        let revokedAt = try #require(formatter.date(from: revokedAtText) ?? plain.date(from: revokedAtText), "not RFC 3339: \(revokedAtText)")
        #expect(abs(revokedAt.timeIntervalSince(requestedAt)) < 5)

        // The second instance refuses every access token of the user within 1 s.
        for token in accessTokens {
            _ = try await eventually(timeout: .seconds(1), interval: .milliseconds(5)) {
                try await DriverAPI.profile(second, token: token).status == 401
            }
        }
        let propagation = clock.now - revokedAtClock
        print("admin session revocation honoured by the second instance after \(Int(propagation.driverMilliseconds)) ms")
        #expect(propagation < .seconds(1))
        for gateway in [first, second] {
            for token in accessTokens {
                let refused = try await DriverAPI.profile(gateway, token: token)
                #expect(refused.status == 401)
                #expect(refused.code == "INVALID_TOKEN")
            }
        }
        // Every refresh token of the user is dead on both instances.
        for (gateway, token) in [(first, sessionB.refreshToken), (second, refreshedA.refreshToken)] {
            let refused = try await DriverAPI.refresh(gateway, token)
            #expect(refused.status == 401, "\(refused)")
            #expect(refused.code == "INVALID_TOKEN")
        }
        // An instance started after the revocation learns it from Redis before it matters:
        // its very first bearer requests refuse the revoked tokens.
        let third = try await GatewayProcess(yaml: yaml)
        for token in accessTokens {
            let refused = try await DriverAPI.profile(third, token: token)
            #expect(refused.status == 401, "a gateway started after the revocation accepted a revoked token: \(refused)")
        }
        #expect(try await DriverAPI.profile(third, token: bystander.accessToken).status == 200)
        await third.stop()

        // The other user is untouched.
        #expect(try await DriverAPI.profile(second, token: bystander.accessToken).status == 200)
        #expect(try await DriverAPI.refresh(second, bystander.refreshToken).status == 200)

        // A new login (right after the revocation) works on both instances.
        let again = try await DriverAPI.login(gateway: second, phone: phone)
        #expect(again.userID == userID)
        #expect(!again.isNewUser)
        for gateway in [first, second] {
            let answer = try await DriverAPI.profile(gateway, token: again.accessToken)
            #expect(answer.status == 200, "\(answer)")
            #expect(DriverEcho.single(answer, "X-Gateway-User-Id") == userID)
        }
        #expect(try await DriverAPI.refresh(first, again.refreshToken).status == 200)

        // Revoking again is fine and ends the new session as well.
        #expect(try await DriverAPI.admin(second, .POST, "/v1/users/\(userID)/revoke-sessions").status == 200)
        try await eventually(timeout: .seconds(1), interval: .milliseconds(5)) {
            try await DriverAPI.profile(first, token: again.accessToken).status == 401
        }
    }

    /// A gateway that has never read the revocations (it started while Redis was down) must
    /// not accept a logged-out session's access token as if nothing had been revoked.
    @Test func anInstanceThatCannotReadRevocationsDoesNotGuess() async throws {
        let redis = try await RedisServer(appendOnly: true)
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let yaml = DriverYAML.make(redis: redis, upstream: upstream)
        let first = try await GatewayProcess(yaml: yaml)
        let loggedOut = try await DriverAPI.login(first, phone: "9876543210")
        let kept = try await DriverAPI.login(first, phone: "9876543211")
        #expect(try await DriverAPI.logout(first, access: loggedOut.accessToken).status == 204)
        #expect(try await DriverAPI.profile(first, token: loggedOut.accessToken).status == 401)

        await redis.stop()
        let late = try await GatewayProcess(yaml: yaml)
        let revoked = try await DriverAPI.profile(late, token: loggedOut.accessToken)
        #expect(revoked.status != 200, "a revoked token was accepted by an instance that never read the revocations")
        #expect(revoked.status == 503, "\(revoked)")
        #expect(revoked.code == "SERVICE_UNAVAILABLE")
        // Invalid tokens are still refused as such, without Redis.
        #expect(try await DriverAPI.profile(late, token: "nonsense").code == "INVALID_TOKEN")
        #expect(try await DriverAPI.profile(late, authorization: nil).code == "MISSING_TOKEN")
        // The instance that has read them keeps working from its cache.
        #expect(try await DriverAPI.profile(first, token: kept.accessToken).status == 200)
        #expect(try await DriverAPI.profile(first, token: loggedOut.accessToken).status == 401)

        try await redis.start()
        try await eventually(timeout: .seconds(10), interval: .milliseconds(50)) {
            try await DriverAPI.profile(late, token: kept.accessToken).status == 200
        }
        let refused = try await DriverAPI.profile(late, token: loggedOut.accessToken)
        #expect(refused.status == 401, "\(refused)")
        #expect(refused.code == "INVALID_TOKEN")
    }

    @Test func aRotatedSigningKeyStillVerifiesAndTheNewOneSigns() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let newSecret = "rotated-jwt-secret-abcdefghijklmnopqrstuvwxyz-0123456789"
        let old = try await GatewayProcess(yaml: DriverYAML.make(
            redis: redis, upstream: upstream,
            tokens: "{signing_keys: [{kid: k1, secret_env: GATEWAY_JWT_SECRET}]}"
        ))
        let new = try await GatewayProcess(
            yaml: DriverYAML.make(
                redis: redis, upstream: upstream,
                tokens: "{signing_keys: [{kid: k2, secret_env: JWT_NEW}, {kid: k1, secret_env: GATEWAY_JWT_SECRET}]}"
            ),
            environment: ["JWT_NEW": newSecret]
        )
        let phone = "9876567890"
        let before = try await DriverAPI.login(gateway: old, phone: phone)
        #expect(DriverJWT.header(before.accessToken)?["kid"] as? String == "k1")

        // The new instance accepts the old key's token.
        let accepted = try await DriverAPI.profile(new, token: before.accessToken)
        #expect(accepted.status == 200, "\(accepted)")
        #expect(DriverEcho.single(accepted, "X-Gateway-User-Id") == before.userID)

        // And signs with the new key, on login and on refresh; the old instance, which does
        // not know k2, refuses those tokens.
        let after = try await DriverAPI.login(gateway: new, phone: phone)
        #expect(after.userID == before.userID)
        let refreshed = try DriverTokenPair(try await DriverAPI.refresh(new, before.refreshToken))
        for token in [after.accessToken, refreshed.accessToken] {
            #expect(DriverJWT.header(token)?["kid"] as? String == "k2")
            #expect(try await DriverAPI.profile(new, token: token).status == 200)
            let refused = try await DriverAPI.profile(old, token: token)
            #expect(refused.status == 401)
            #expect(refused.code == "INVALID_TOKEN")
        }
        // The k2 token really is signed with the new secret (checked with PyJWT).
        let output = try await DriverPython.run(
            """
            import json, sys, jwt
            print(json.dumps(jwt.decode(sys.argv[1], sys.argv[2].encode(), algorithms=["HS256"], issuer="partner-gateway")))
            """,
            [after.accessToken, newSecret]
        )
        #expect(try DriverPython.jsonObject(output)["user_id"] as? String == before.userID)
    }
}

extension DriverAPI {
    /// `login` with a label, for tests that juggle several gateways.
    static func login(gateway: GatewayProcess, phone: String) async throws -> DriverTokenPair {
        try await login(gateway, phone: phone)
    }
}
