import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// Process-level behaviour of driver login: what an external client sees, Redis outages, the
/// SMS provider and the log.
@Suite("Driver login: external clients, outages, SMS and logs", .serialized, .timingSensitive)
struct DriverLoginProcessTests {
    @Test func anExternalClientVerifiesAccessTokensWithPyJWT() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis))
        let pair = try await DriverAPI.login(gateway, phone: "9876543210")
        let output = try await DriverPython.run(
            """
            import json, sys, jwt
            token, secret = sys.argv[1], sys.argv[2].encode()
            claims = jwt.decode(token, secret, algorithms=["HS256"], issuer="partner-gateway",
                                options={"require": ["exp", "iat", "iss", "jti"]})
            print(json.dumps({"header": jwt.get_unverified_header(token), "claims": claims}))
            """,
            [pair.accessToken, GatewayProcess.jwtSecret]
        )
        let object = try DriverPython.jsonObject(output)
        let header = try #require(object["header"] as? [String: Any])
        let claims = try #require(object["claims"] as? [String: Any])
        #expect(header["kid"] as? String == "k1")
        #expect(header["alg"] as? String == "HS256")
        #expect(claims["user_id"] as? String == pair.userID)
        let sid = try #require(claims["sid"] as? String)
        #expect(!sid.isEmpty)
        #expect(claims["channel"] as? String == "otp")
        #expect(claims["partner_id"] == nil)
        #expect((claims["jti"] as? String)?.isEmpty == false)
        let iat = try #require(claims["iat"] as? Int)
        let exp = try #require(claims["exp"] as? Int)
        #expect(exp - iat == 86400)
        #expect(abs(iat - Int(Date().timeIntervalSince1970)) < 30)
        #expect(pair.answer.json["access_token_expires_at"] as? Int == exp)
        // The session id is the same across a refresh (the refresh-token family).
        let refreshed = try DriverTokenPair(try await DriverAPI.refresh(gateway, pair.refreshToken))
        #expect(refreshed.sessionID == sid)
    }

    /// A gateway at a 250 ms `redis.timeout` with a partner key and a logged-in driver, the key
    /// and the access token cached by a first mint and bearer call; set up again on fresh
    /// processes when a setup call fails closed (``ServiceUnavailableAnswer``).
    struct OutageFixture {
        let redis: RedisServer
        let upstream: EchoUpstreamProcess
        let gateway: GatewayProcess
        let key: String
        let pair: DriverTokenPair

        init() async throws {
            self = try await ServiceUnavailableAnswer.startingOver { try await Self(freshProcesses: ()) }
        }

        private init(freshProcesses: Void) async throws {
            redis = try await RedisServer()
            upstream = try await EchoUpstreamProcess()
            gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, upstream: upstream, redisTimeout: "250ms"))
            let partnerID = try await DriverAPI.createPartner(gateway, name: "NammaYatri")
            key = try await DriverAPI.createKey(gateway, partnerID: partnerID)
            pair = try await DriverAPI.login(gateway, phone: "9876543210")
            let minted = try await DriverAPI.mint(gateway, key: key, phone: "9876543211", driverID: "NY-1").available("sdk mint")
            #expect(minted.status == 200)
            #expect(try await DriverAPI.profile(gateway, token: pair.accessToken).status == 200)
        }
    }

    @Test func withRedisDownLoginCallsFailClosedQuicklyAndBearerRoutesKeepWorking() async throws {
        let fixture = try await OutageFixture()
        let (redis, gateway, key, pair) = (fixture.redis, fixture.gateway, fixture.key, fixture.pair)
        defer { fixture.upstream.stop() }
        #expect(try await DriverAPI.trigger(gateway, phone: "9876543212").status == 200)

        await redis.stop()

        // The first call may be the one that notices; after it, every trigger answers 503
        // within the Redis timeout (250 ms) plus 100 ms.
        let first = try await DriverAPI.trigger(gateway, phone: "9876543212")
        #expect(first.status == 503, "\(first)")
        var slowest = Duration.zero
        for index in 0..<8 {
            let answer = try await DriverAPI.trigger(gateway, phone: "987654330\(index)")
            #expect(answer.status == 503, "\(answer)")
            #expect(answer.code == "SERVICE_UNAVAILABLE")
            #expect(answer.isErrorShape)
            slowest = max(slowest, answer.elapsed)
        }
        print("trigger with Redis down: first answer \(Int(first.elapsed.driverMilliseconds)) ms, slowest of the next 8 \(Int(slowest.driverMilliseconds)) ms")
        #expect(slowest <= .milliseconds(350))

        let verify = try await DriverAPI.verify(gateway, phone: "9876543212", otp: "123456")
        #expect(verify.status == 503, "\(verify)")
        #expect(verify.code == "SERVICE_UNAVAILABLE")
        let refresh = try await DriverAPI.refresh(gateway, pair.refreshToken)
        #expect(refresh.status == 503, "\(refresh)")
        #expect(refresh.code == "SERVICE_UNAVAILABLE")
        #expect(refresh.elapsed <= .milliseconds(350))
        let mint = try await DriverAPI.mint(gateway, key: key, phone: "9876543211", driverID: "NY-1")
        #expect(mint.status == 503, "\(mint)")
        #expect(mint.code == "SERVICE_UNAVAILABLE")
        #expect(mint.elapsed <= .milliseconds(350))

        // Bearer validation needs no Redis: the upstream still gets the call, with identity.
        let forwarded = try await DriverAPI.profile(gateway, token: pair.accessToken)
        #expect(forwarded.status == 200, "\(forwarded)")
        #expect(DriverEcho.single(forwarded, "X-Gateway-User-Id") == pair.userID)
        // And still refuses what it must.
        #expect(try await DriverAPI.profile(gateway, authorization: nil).code == "MISSING_TOKEN")
        #expect(try await DriverAPI.profile(gateway, token: pair.accessToken + "x").code == "INVALID_TOKEN")

        // Logout cannot record the revocation: 503, and nothing half-done.
        let logout = try await DriverAPI.logout(gateway, access: pair.accessToken)
        #expect(logout.status == 503, "\(logout)")
        #expect(logout.code == "SERVICE_UNAVAILABLE")

        // Redis back: login works again.
        try await redis.start()
        try await eventually(timeout: .seconds(10), interval: .milliseconds(100)) {
            try await DriverAPI.trigger(gateway, phone: "9876543213").status == 200
        }
        #expect(try await DriverAPI.verify(gateway, phone: "9876543213", otp: "123456").status == 200)
    }

    /// A Redis that accepts connections but never answers (SIGSTOP) is the case where
    /// `redis.timeout` matters: each login call must give up after it, not hang.
    @Test func withRedisFrozenLoginCallsAnswer503WithinTheRedisTimeout() async throws {
        let fixture = try await OutageFixture()
        let (redis, gateway, key, pair) = (fixture.redis, fixture.gateway, fixture.key, fixture.pair)
        defer {
            redis.resume()
            fixture.upstream.stop()
        }

        redis.freeze()
        var slowest = Duration.zero
        for index in 0..<4 {
            let answer = try await DriverAPI.trigger(gateway, phone: "987654330\(index)")
            #expect(answer.status == 503, "\(answer)")
            #expect(answer.code == "SERVICE_UNAVAILABLE")
            if index > 0 { slowest = max(slowest, answer.elapsed) }
        }
        let refresh = try await DriverAPI.refresh(gateway, pair.refreshToken)
        #expect(refresh.status == 503, "\(refresh)")
        let mint = try await DriverAPI.mint(gateway, key: key, phone: "9876543211", driverID: "NY-1")
        #expect(mint.status == 503, "\(mint)")
        slowest = max(slowest, refresh.elapsed, mint.elapsed)
        print("login calls with Redis frozen: slowest 503 after \(Int(slowest.driverMilliseconds)) ms (redis.timeout 250 ms)")
        #expect(slowest <= .milliseconds(350))
        // Bearer routes do not wait for Redis.
        let forwarded = try await DriverAPI.profile(gateway, token: pair.accessToken)
        #expect(forwarded.status == 200, "\(forwarded)")
        #expect(forwarded.elapsed < .milliseconds(250))

        redis.resume()
        try await eventually(timeout: .seconds(10), interval: .milliseconds(100)) {
            try await DriverAPI.trigger(gateway, phone: "9876543212").status == 200
        }
        #expect(try await DriverAPI.verify(gateway, phone: "9876543212", otp: "123456").status == 200)
        #expect(try await DriverAPI.refresh(gateway, pair.refreshToken).status == 200)
    }

    @Test func smsModeSendsTheCodeThroughTheWebhookAndFailsClosed() async throws {
        let redis = try await RedisServer()
        try await DriverSMSWebhook.serve { webhook, port in
            let gateway = try await GatewayProcess(yaml: DriverYAML.make(
                redis: redis, otp: "{mode: sms, sms_webhook_url: 'http://127.0.0.1:\(port)/sms', sms_timeout: 500ms}"
            ))
            let phone = "9876543210"
            let sent = try await DriverAPI.trigger(gateway, phone: phone)
            #expect(sent.status == 200, "\(sent)")
            #expect(sent.string("status") == "sent")
            #expect(sent.json["expires_in"] as? Int == 600)
            let bodies = await webhook.bodies
            try #require(bodies.count == 1)
            let message = try #require(try JSONSerialization.jsonObject(with: Data(bodies[0].utf8)) as? [String: Any])
            #expect(Set(message.keys) == ["phone", "message"])
            #expect(message["phone"] as? String == "+919876543210")
            let text = try #require(message["message"] as? String)
            let code = try #require(DriverSMSWebhook.code(in: text), "no 6-digit code in \(text)")

            // The UAT code means nothing here (unless the CSPRNG happened to pick it).
            if code != DriverAPI.uatCode {
                let uat = try await DriverAPI.verify(gateway, phone: phone, otp: DriverAPI.uatCode)
                #expect(uat.status == 401)
                #expect(uat.code == "INVALID_OTP")
            }
            let pair = try DriverTokenPair(try await DriverAPI.verify(gateway, phone: phone, otp: code))
            #expect(pair.isNewUser)
            // Each trigger sends a fresh code; the old one is replaced.
            #expect(try await DriverAPI.trigger(gateway, phone: phone).status == 200)
            #expect(try await DriverAPI.trigger(gateway, phone: phone).status == 200)
            let codes = await webhook.bodies.suffix(2).compactMap { body -> String? in
                let object = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]
                return (object?["message"] as? String).flatMap(DriverSMSWebhook.code(in:))
            }
            try #require(codes.count == 2)
            if codes[0] != codes[1] {
                let stale = try await DriverAPI.verify(gateway, phone: phone, otp: codes[0])
                #expect(stale.status == 401, "\(stale)")
            }
            let latest = try #require(await webhook.lastCode(for: phone))
            #expect(try await DriverAPI.verify(gateway, phone: phone, otp: latest).status == 200)
            await gateway.stop()

            // The provider answers 500: the code did not go out, so 503.
            let failing = try await GatewayProcess(yaml: DriverYAML.make(
                redis: redis, otp: "{mode: sms, sms_webhook_url: 'http://127.0.0.1:\(port)/fail', sms_timeout: 500ms}"
            ))
            let refused = try await DriverAPI.trigger(failing, phone: "9876543211")
            #expect(refused.status == 503, "\(refused)")
            #expect(refused.code == "SERVICE_UNAVAILABLE")
            #expect(refused.isErrorShape)
            #expect(await webhook.bodies.count == 4)
            await failing.stop()

            // The provider never answers: 503 once sms_timeout has passed.
            let hanging = try await GatewayProcess(yaml: DriverYAML.make(
                redis: redis, otp: "{mode: sms, sms_webhook_url: 'http://127.0.0.1:\(port)/hang', sms_timeout: 500ms}"
            ))
            let timedOut = try await DriverAPI.trigger(hanging, phone: "9876543212")
            #expect(timedOut.status == 503, "\(timedOut)")
            #expect(timedOut.code == "SERVICE_UNAVAILABLE")
            print("sms webhook that never answers: trigger answered 503 after \(Int(timedOut.elapsed.driverMilliseconds)) ms (sms_timeout 500 ms)")
            #expect(timedOut.elapsed >= .milliseconds(450))
            #expect(timedOut.elapsed < .milliseconds(2000))
            await hanging.stop()
        }

        // Nothing listens on the provider's port: 503.
        let unreachable = try await GatewayProcess(yaml: DriverYAML.make(
            redis: redis, otp: "{mode: sms, sms_webhook_url: 'http://127.0.0.1:\(LoopbackPort.free())/sms', sms_timeout: 500ms}"
        ))
        let refused = try await DriverAPI.trigger(unreachable, phone: "9876543213")
        #expect(refused.status == 503, "\(refused)")
        #expect(refused.code == "SERVICE_UNAVAILABLE")
        #expect(refused.elapsed < .milliseconds(2000))
    }

    @Test func theLogHoldsNoPhoneCodeTokenOrKey() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        try await DriverSMSWebhook.serve { webhook, port in
            let yaml = DriverYAML.make(
                redis: redis, upstream: upstream,
                otp: "{mode: sms, sms_webhook_url: 'http://127.0.0.1:\(port)/sms', sms_timeout: 2s}",
                log: "{level: debug}"
            )
            let gateway = try await GatewayProcess(yaml: yaml)
            let phone = "9876543210"
            var secrets: [String] = []
            var codes: [String] = []

            // OTP login: a wrong code first, then the real one.
            #expect(try await DriverAPI.trigger(gateway, phone: phone).status == 200)
            let code = try #require(await webhook.lastCode(for: phone))
            codes.append(code)
            let wrong = code == "000000" ? "000001" : "000000"
            #expect(try await DriverAPI.verify(gateway, phone: phone, otp: wrong).status == 401)
            let pair = try DriverTokenPair(try await DriverAPI.verify(gateway, phone: phone, otp: code))
            secrets += [pair.accessToken, pair.refreshToken]
            // A used code again, a bearer call, a refresh, its retry within the reuse interval,
            // another refresh, a reuse, a logout.
            #expect(try await DriverAPI.verify(gateway, phone: "+91" + phone, otp: code).status == 401)
            #expect(try await DriverAPI.profile(gateway, token: pair.accessToken).status == 200)
            let refreshed = try DriverTokenPair(try await DriverAPI.refresh(gateway, pair.refreshToken))
            secrets += [refreshed.accessToken, refreshed.refreshToken]
            let retried = try DriverTokenPair(try await DriverAPI.refresh(gateway, pair.refreshToken))
            secrets.append(retried.accessToken)
            let third = try DriverTokenPair(try await DriverAPI.refresh(gateway, refreshed.refreshToken))
            secrets += [third.accessToken, third.refreshToken]
            #expect(try await DriverAPI.refresh(gateway, pair.refreshToken).status == 401)
            #expect(try await DriverAPI.profile(gateway, token: third.accessToken).status == 401)
            #expect(try await DriverAPI.trigger(gateway, phone: phone).status == 200)
            let secondCode = try #require(await webhook.lastCode(for: phone))
            codes.append(secondCode)
            let second = try DriverTokenPair(try await DriverAPI.verify(gateway, phone: phone, otp: secondCode))
            secrets += [second.accessToken, second.refreshToken]
            #expect(try await DriverAPI.logout(gateway, access: second.accessToken, refreshToken: second.refreshToken).status == 204)

            // SDK mint with a key, and with a wrong key.
            let partnerID = try await DriverAPI.createPartner(gateway, name: "NammaYatri")
            let key = try await DriverAPI.createKey(gateway, partnerID: partnerID)
            secrets.append(key)
            let sdk = try DriverTokenPair(try await DriverAPI.mint(gateway, key: key, phone: phone, driverID: "NY-123", name: "Ravi"))
            secrets += [sdk.accessToken, sdk.refreshToken]
            #expect(try await DriverAPI.profile(gateway, token: sdk.accessToken).status == 200)
            let wrongKey = String(key.dropLast(3)) + "zzz"
            #expect(try await DriverAPI.mint(gateway, key: wrongKey, phone: phone, driverID: "NY-123").status == 401)
            secrets.append(wrongKey)
            // A bad token on the bearer route.
            let forged = String(pair.accessToken.dropLast(4)) + "AAAA"
            #expect(try await DriverAPI.profile(gateway, token: forged).status == 401)
            secrets.append(forged)
            // Admin revocation of the user.
            #expect(try await DriverAPI.admin(gateway, .POST, "/v1/users/\(pair.userID)/revoke-sessions").status == 200)

            // Let the last lines reach the file, then look.
            await gateway.stop()
            let log = gateway.log
            #expect(!log.isEmpty)
            #expect(log.contains("******3210"), "the masked phone should be logged")
            #expect(!log.contains(phone), "the full phone number is in the log")
            for code in codes + [wrong] {
                #expect(!Self.containsDigitRun(log, code), "an OTP code is in the log")
            }
            for secret in secrets {
                #expect(!log.contains(secret), "a token or key is in the log: \(secret.prefix(12))...")
                // Nor a long piece of one (a truncated but still useful token).
                #expect(!log.contains(String(secret.suffix(40))), "a piece of a token or key is in the log: \(secret.prefix(12))...")
            }
            // The JWT signatures alone would be enough to replay a token.
            for token in [pair.accessToken, refreshed.accessToken, second.accessToken, sdk.accessToken] {
                let signature = try #require(token.split(separator: ".").last)
                #expect(!log.contains(signature))
            }
            if ProcessInfo.processInfo.environment["DRIVER_DUMP_LOG"] != nil { print(log) }
            print("log hygiene: checked \(log.split(separator: "\n").count) log lines at debug level")
        }
    }

    /// Whether `code` appears in `text` as a run of digits of its own (not inside a longer
    /// number such as a timestamp).
    static func containsDigitRun(_ text: String, _ code: String) -> Bool {
        var searchRange = text.startIndex..<text.endIndex
        while let found = text.range(of: code, range: searchRange) {
            let before = found.lowerBound == text.startIndex ? nil : text[text.index(before: found.lowerBound)]
            let after = found.upperBound == text.endIndex ? nil : text[found.upperBound]
            if !(before?.isNumber ?? false) && !(after?.isNumber ?? false) { return true }
            searchRange = found.upperBound..<text.endIndex
        }
        return false
    }
}
