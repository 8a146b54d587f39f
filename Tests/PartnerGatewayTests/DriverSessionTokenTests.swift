import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// Refresh, bearer routes and logout (docs/public-api.md) against a real gateway process,
/// Redis and echo upstream.
@Suite("Driver sessions: refresh, bearer routes, logout", .realProcesses)
struct DriverSessionTokenTests {
    @Test(arguments: ["{refresh_reuse_interval: 0}", "{refresh_reuse_interval: 10s}"])
    func refreshRotatesAndReuseRevokesTheWholeSession(tokens: String) async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, upstream: upstream, tokens: tokens))
        let login = try await DriverAPI.login(gateway, phone: "9876543210")
        #expect(try await DriverAPI.profile(gateway, token: login.accessToken).status == 200)

        // One refresh: a new pair of the same user and session.
        let answer = try await DriverAPI.refresh(gateway, login.refreshToken)
        let refreshed = try DriverTokenPair(answer)
        #expect(refreshed.userID == login.userID)
        #expect(!refreshed.isNewUser)
        #expect(refreshed.refreshToken != login.refreshToken)
        #expect(refreshed.accessToken != login.accessToken)
        #expect(refreshed.sessionID == login.sessionID)
        #expect(answer.json["token_type"] as? String == "Bearer")
        #expect(answer.json["expires_in"] as? Int == 86400)
        #expect(answer.json["access_token_expires_at"] is Int)
        #expect(refreshed.refreshToken.count == 64 && refreshed.refreshToken.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(DriverJWT.claims(refreshed.accessToken)?["channel"] as? String == "otp")
        #expect(try await DriverAPI.profile(gateway, token: refreshed.accessToken).status == 200)
        // The successor rotates too.
        let third = try DriverTokenPair(try await DriverAPI.refresh(gateway, refreshed.refreshToken))
        #expect(third.userID == login.userID)

        // Another session of the same user, untouched by what follows.
        let other = try await DriverAPI.login(gateway, phone: "9876543210")
        #expect(!other.isNewUser)

        // Presenting a spent token again: refused, and the whole session dies with it.
        let reuse = try await DriverAPI.refresh(gateway, login.refreshToken)
        #expect(reuse.status == 401, "\(reuse)")
        #expect(reuse.code == "INVALID_TOKEN")
        #expect(reuse.isErrorShape)
        let successor = try await DriverAPI.refresh(gateway, third.refreshToken)
        #expect(successor.status == 401, "\(successor)")
        #expect(successor.code == "INVALID_TOKEN")
        for token in [login.accessToken, refreshed.accessToken, third.accessToken] {
            let refused = try await DriverAPI.profile(gateway, token: token)
            #expect(refused.status == 401, "\(refused)")
            #expect(refused.code == "INVALID_TOKEN")
        }
        // The other session still works.
        #expect(try await DriverAPI.profile(gateway, token: other.accessToken).status == 200)
        #expect(try await DriverAPI.refresh(gateway, other.refreshToken).status == 200)

        // Malformed and unknown refresh tokens.
        let unknown = String(repeating: "ab", count: 32)
        for token in ["", "abc", unknown, unknown.uppercased(), String(unknown.dropLast()) + "g", login.refreshToken + "00", String(repeating: "0", count: 64)] {
            let refused = try await DriverAPI.refresh(gateway, token)
            #expect(refused.status == 401, "\(token): \(refused)")
            #expect(refused.code == "INVALID_TOKEN", "\(token): \(refused)")
            #expect(refused.isErrorShape)
        }
        for body in [#"{"refresh_token": 42}"#, "{}", "", "{"] {
            let refused = try await DriverAPI.post(gateway, "/auth/token/refresh", body: body)
            #expect([400, 401].contains(refused.status), "\(body): \(refused)")
            #expect(refused.isErrorShape, "\(body): \(refused)")
        }
        // An access token is not a refresh token.
        let wrongKind = try await DriverAPI.refresh(gateway, other.accessToken)
        #expect(wrongKind.status == 401)
        #expect(wrongKind.code == "INVALID_TOKEN")
    }

    /// With `refresh_reuse_interval: 0` (the strict rule), exactly one of 20 concurrent
    /// refreshes with one token succeeds and the rest are reuse.
    @Test func twentyParallelRefreshesWithOneTokenExactlyOneSucceedsWithoutAReuseInterval() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, tokens: "{refresh_reuse_interval: 0}"))
        for round in 0..<2 {
            let login = try await DriverAPI.login(gateway, phone: "912345678\(round)")
            let answers = try await withThrowingTaskGroup(of: DriverResponse.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await DriverAPI.refresh(gateway, login.refreshToken) }
                }
                var answers: [DriverResponse] = []
                for try await answer in group { answers.append(answer) }
                return answers
            }
            let succeeded = answers.filter { $0.status == 200 }
            let refused = answers.filter { $0.status == 401 && $0.code == "INVALID_TOKEN" }
            print("20 parallel refreshes (round \(round)): \(succeeded.count) × 200, \(refused.count) × 401")
            #expect(succeeded.count == 1)
            #expect(refused.count == 19, "\(answers.filter { $0.status != 200 && $0.status != 401 })")
            if let winner = succeeded.first {
                #expect(winner.string("user_id") == login.userID)
            }
        }
    }

    @Test func bearerRoutesForwardIdentityAndRefuseEveryBadToken() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, upstream: upstream))
        let login = try await DriverAPI.login(gateway, phone: "9811122233")

        let missing = try await DriverAPI.profile(gateway, authorization: nil)
        #expect(missing.status == 401, "\(missing)")
        #expect(missing.code == "MISSING_TOKEN")
        #expect(missing.isErrorShape)
        for authorization in ["Basic x", "Bearer", "Bearer ", "Bearer not-a-jwt", "Token \(login.accessToken)", login.accessToken, "Bearer \(login.accessToken)x"] {
            let refused = try await DriverAPI.profile(gateway, authorization: authorization)
            #expect(refused.status == 401, "\(authorization): \(refused)")
            #expect(refused.code == "INVALID_TOKEN", "\(authorization): \(refused)")
            #expect(refused.isErrorShape)
        }

        // A valid token reaches the upstream with the gateway's identity headers, and spoofed
        // ones are dropped.
        let forwarded = try await DriverHTTP.call(gateway.baseURL + "/user/profile", headers: [
            ("Authorization", "Bearer \(login.accessToken)"),
            ("X-Gateway-User-Id", "usr_000000000000000000000000"),
            ("X-Gateway-Partner-Id", "ptr_spoofed"),
        ])
        #expect(forwarded.status == 200, "\(forwarded)")
        #expect(forwarded.string("path") == "/user/profile")
        #expect(DriverEcho.single(forwarded, "X-Gateway-User-Id") == login.userID)
        #expect(DriverEcho.single(forwarded, "X-Gateway-Auth-Channel") == "otp")
        #expect(DriverEcho.header(forwarded, "X-Gateway-Partner-Id") == nil)
        #expect(DriverEcho.header(forwarded, "Authorization") == nil)

        // Tokens made by someone else (PyJWT, as an attacker or a buggy client would).
        let output = try await DriverPython.run(
            """
            import json, secrets, sys, time, jwt
            secret, user = sys.argv[1].encode(), sys.argv[2]
            now = int(time.time())
            def claims(**changes):
                c = {"user_id": user, "sid": secrets.token_hex(8), "jti": secrets.token_hex(8),
                     "iss": "partner-gateway", "iat": now, "exp": now + 600, "channel": "otp"}
                c.update(changes)
                return c
            def sign(c, key=secret, alg="HS256", kid="k1"):
                return jwt.encode(c, key, algorithm=alg, headers=None if kid is None else {"kid": kid})
            print(json.dumps({
                "good": sign(claims()),
                "other_secret": sign(claims(), key=b"another-secret-0123456789abcdef0123456789"),
                "alg_none": jwt.encode(claims(), None, algorithm="none", headers={"kid": "k1"}),
                "hs512": sign(claims(), alg="HS512"),
                "hs384": sign(claims(), alg="HS384"),
                "unknown_kid": sign(claims(), kid="k9"),
                "no_kid": sign(claims(), kid=None),
                "expired": sign(claims(iat=now - 7200, exp=now - 3600)),
                "expired_beyond_leeway": sign(claims(iat=now - 700, exp=now - 30)),
                "wrong_issuer": sign(claims(iss="someone-else")),
                "sdk_without_partner": sign(claims(channel="partner_sdk")),
                "missing_sid": sign({k: v for k, v in claims().items() if k != "sid"}),
            }))
            """,
            [GatewayProcess.jwtSecret, login.userID]
        )
        let forged = try DriverPython.jsonObject(output)
        // The control: a well-formed token under the right secret and kid is accepted, so the
        // refusals below are about what each one changes.
        let good = try await DriverAPI.profile(gateway, token: try #require(forged["good"] as? String))
        #expect(good.status == 200, "\(good)")
        #expect(DriverEcho.single(good, "X-Gateway-User-Id") == login.userID)
        for name in ["other_secret", "alg_none", "hs512", "hs384", "unknown_kid", "no_kid", "expired", "expired_beyond_leeway", "wrong_issuer", "sdk_without_partner", "missing_sid"] {
            let token = try #require(forged[name] as? String, "\(name)")
            let refused = try await DriverAPI.profile(gateway, token: token)
            #expect(refused.status == 401, "\(name): \(refused)")
            #expect(refused.code == "INVALID_TOKEN", "\(name): \(refused)")
            #expect(refused.isErrorShape)
        }
        // A genuine token with its payload altered.
        let parts = login.accessToken.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        var claims = try #require(DriverJWT.claims(login.accessToken))
        claims["user_id"] = "usr_ffffffffffffffffffffffff"
        let payload = try JSONSerialization.data(withJSONObject: claims).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let tampered = try await DriverAPI.profile(gateway, token: [parts[0], payload, parts[2]].joined(separator: "."))
        #expect(tampered.status == 401)
        #expect(tampered.code == "INVALID_TOKEN")
        // The genuine token still works after all those refusals.
        #expect(try await DriverAPI.profile(gateway, token: login.accessToken).status == 200)
    }

    @Test func logoutRevokesItsSessionAndThePresentedOne() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, upstream: upstream))
        let phone = "9700011122"
        let first = try await DriverAPI.login(gateway, phone: phone)
        let second = try await DriverAPI.login(gateway, phone: phone)
        let third = try await DriverAPI.login(gateway, phone: phone)
        let stranger = try await DriverAPI.login(gateway, phone: "9700011123")
        #expect(Set([first.userID, second.userID, third.userID]).count == 1)
        #expect(Set([first.sessionID, second.sessionID, third.sessionID]).count == 3)

        let missing = try await DriverAPI.logout(gateway, access: nil)
        #expect(missing.status == 401, "\(missing)")
        #expect(missing.code == "MISSING_TOKEN")
        #expect(missing.isErrorShape)
        let garbage = try await DriverAPI.logout(gateway, access: "nonsense")
        #expect(garbage.status == 401)
        #expect(garbage.code == "INVALID_TOKEN")

        // Logout of the first session, without a body.
        let out = try await DriverAPI.logout(gateway, access: first.accessToken)
        #expect(out.status == 204, "\(out)")
        #expect(out.text.isEmpty)
        let deadAccess = try await DriverAPI.profile(gateway, token: first.accessToken)
        #expect(deadAccess.status == 401)
        #expect(deadAccess.code == "INVALID_TOKEN")
        let deadRefresh = try await DriverAPI.refresh(gateway, first.refreshToken)
        #expect(deadRefresh.status == 401)
        #expect(deadRefresh.code == "INVALID_TOKEN")
        // Logging out again with the revoked access token is refused.
        #expect(try await DriverAPI.logout(gateway, access: first.accessToken).status == 401)

        // The second login's session is untouched.
        #expect(try await DriverAPI.profile(gateway, token: second.accessToken).status == 200)
        let secondRefreshed = try DriverTokenPair(try await DriverAPI.refresh(gateway, second.refreshToken))

        // Another user's refresh token in the body does not end that user's session.
        let foreign = try await DriverAPI.logout(gateway, access: secondRefreshed.accessToken, refreshToken: stranger.refreshToken)
        #expect(foreign.status == 204, "\(foreign)")
        #expect(try await DriverAPI.profile(gateway, token: stranger.accessToken).status == 200)
        #expect(try await DriverAPI.refresh(gateway, stranger.refreshToken).status == 200)
        #expect(try await DriverAPI.profile(gateway, token: secondRefreshed.accessToken).status == 401)
        #expect(try await DriverAPI.refresh(gateway, secondRefreshed.refreshToken).status == 401)

        // With the body naming the third session's refresh token (same user), the third
        // session dies too: its refresh token and its access token.
        let fourth = try await DriverAPI.login(gateway, phone: phone)
        let both = try await DriverAPI.logout(gateway, access: fourth.accessToken, refreshToken: third.refreshToken)
        #expect(both.status == 204, "\(both)")
        let thirdRefresh = try await DriverAPI.refresh(gateway, third.refreshToken)
        #expect(thirdRefresh.status == 401)
        #expect(thirdRefresh.code == "INVALID_TOKEN")
        #expect(try await DriverAPI.profile(gateway, token: third.accessToken).status == 401)
        #expect(try await DriverAPI.profile(gateway, token: fourth.accessToken).status == 401)
        #expect(try await DriverAPI.refresh(gateway, fourth.refreshToken).status == 401)

        // A malformed refresh token in the body is the client's mistake.
        let fifth = try await DriverAPI.login(gateway, phone: phone)
        let malformed = try await DriverAPI.logout(gateway, access: fifth.accessToken, refreshToken: "xyz")
        #expect(malformed.status == 400, "\(malformed)")
        #expect(malformed.isErrorShape)
        // Logging in again after all that works.
        #expect(try await DriverAPI.profile(gateway, token: fifth.accessToken).status == 200)
    }
}
