import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// Direct OTP login (docs/public-api.md) over HTTP against a real gateway process and Redis, in UAT
/// mode (the code is always 123456).
@Suite("Driver login: OTP trigger and verify", .realProcesses)
struct DriverLoginOTPTests {
    @Test func triggerAnswersSentWithRateLimitHeadersAndRefusesBadInput() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis))

        let sent = try await DriverAPI.trigger(gateway, phone: "9876543210")
        #expect(sent.status == 200, "\(sent)")
        #expect(sent.json.count == 2)
        #expect(sent.string("status") == "sent")
        #expect(sent.json["expires_in"] as? Int == 600)
        #expect(sent.header("Content-Type")?.hasPrefix("application/json") == true)
        #expect(sent.header("X-Request-Id") != nil)
        let limit = try #require(sent.header("RateLimit-Limit").flatMap { Int($0) }, "\(sent.headers)")
        let remaining = try #require(sent.header("RateLimit-Remaining").flatMap { Int($0) })
        let reset = try #require(sent.header("RateLimit-Reset").flatMap { Int($0) })
        #expect(limit >= 1)
        #expect((0..<limit).contains(remaining))
        #expect(reset >= 0)
        #expect(sent.header("Retry-After") == nil)

        // +91 and 91 prefixes are normalised away.
        for phone in ["+919876543211", "919876543212"] {
            let answer = try await DriverAPI.trigger(gateway, phone: phone)
            #expect(answer.status == 200, "\(phone): \(answer)")
        }

        // Not a 10-digit Indian mobile number: INVALID_PHONE.
        for phone in ["12345", "5876543210", "98765432101", "98765 43210", "+449876543210", "", "987654321a", "٩٨٧٦٥٤٣٢١٠"] {
            let answer = try await DriverAPI.trigger(gateway, phone: phone)
            #expect(answer.status == 400, "\(phone): \(answer)")
            #expect(answer.code == "INVALID_PHONE", "\(phone): \(answer)")
            #expect(answer.isErrorShape, "\(answer)")
        }

        // Not the expected JSON at all: INVALID_REQUEST, never 500.
        let malformed: [(String, String)] = [
            ("number instead of string", #"{"phone": 9876543210}"#),
            ("missing field", #"{"mobile": "9876543210"}"#),
            ("null", #"{"phone": null}"#),
            ("not JSON", #"{"phone": "9876543210""#),
            ("an array", #"["9876543210"]"#),
            ("plain text", "phone=9876543210"),
            ("empty body", ""),
            ("whitespace body", "  \n"),
        ]
        for (what, body) in malformed {
            let answer = try await DriverAPI.post(gateway, "/auth/otp/trigger", body: body)
            #expect(answer.status == 400, "\(what): \(answer)")
            #expect(answer.code == "INVALID_REQUEST", "\(what): \(answer)")
            #expect(answer.isErrorShape, "\(what): \(answer)")
        }
        // No body at all.
        let none = try await DriverAPI.post(gateway, "/auth/otp/trigger", body: nil)
        #expect(none.status == 400, "\(none)")
        #expect(none.isErrorShape)

        // Over 64 KiB: a malformed request (400 INVALID_REQUEST), in the error shape.
        let padding = String(repeating: "x", count: 70 * 1024)
        let oversized = try await DriverAPI.post(gateway, "/auth/otp/trigger", body: #"{"phone": "9876543210", "pad": "\#(padding)"}"#)
        #expect(oversized.status == 400, "\(oversized)")
        #expect(oversized.isErrorShape, "\(oversized)")
        #expect(oversized.code == "INVALID_REQUEST")

        // The gateway is still fine after all that.
        #expect(try await DriverAPI.trigger(gateway, phone: "9876543219").status == 200)
        // The refusals did not crash or 500 anything; the same holds for verify's input.
        for body in [#"{"phone": "9876543210", "otp": 123456}"#, #"{"phone": "9876543210"}"#, "{", ""] {
            let answer = try await DriverAPI.post(gateway, "/auth/otp/verify", body: body)
            #expect(answer.status == 400, "\(body): \(answer)")
            #expect(answer.code == "INVALID_REQUEST", "\(body): \(answer)")
        }
        for otp in ["12345", "1234567", "abcdef", ""] {
            let answer = try await DriverAPI.verify(gateway, phone: "9876543210", otp: otp)
            #expect(answer.status == 400 || answer.code == "INVALID_OTP", "\(otp): \(answer)")
            #expect(answer.isErrorShape, "\(answer)")
        }
        let badPhone = try await DriverAPI.verify(gateway, phone: "5876543210", otp: "123456")
        #expect(badPhone.status == 400)
        #expect(badPhone.code == "INVALID_PHONE")
    }

    @Test func verifyIssuesACompleteTokenPairAndRefusesEveryBadCode() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis))
        let phone = "9123456780"

        // No OTP outstanding yet.
        let none = try await DriverAPI.verify(gateway, phone: phone, otp: "123456")
        #expect(none.status == 401, "\(none)")
        #expect(none.code == "INVALID_OTP")
        #expect(none.isErrorShape)

        #expect(try await DriverAPI.trigger(gateway, phone: phone).status == 200)
        let wrong = try await DriverAPI.verify(gateway, phone: phone, otp: "654321")
        #expect(wrong.status == 401, "\(wrong)")
        #expect(wrong.code == "INVALID_OTP")
        #expect(wrong.isErrorShape)

        // The right code (after one wrong try) logs in, creating the user.
        let before = Int(Date().timeIntervalSince1970)
        let answer = try await DriverAPI.verify(gateway, phone: phone, otp: "123456")
        let after = Int(Date().timeIntervalSince1970)
        let pair = try DriverTokenPair(answer)
        let json = answer.json
        #expect(Set(json.keys) == ["access_token", "refresh_token", "token_type", "expires_in", "access_token_expires_at", "user_id", "is_new_user"])
        #expect(json["token_type"] as? String == "Bearer")
        #expect(json["expires_in"] as? Int == 86400)
        let expiresAt = try #require(json["access_token_expires_at"] as? Int)
        #expect((before + 86400 - 1...after + 86400 + 1).contains(expiresAt))
        #expect(pair.isNewUser)
        #expect(pair.userID.hasPrefix("usr_") && pair.userID.count > 4)
        #expect(pair.refreshToken.count == 64)
        #expect(pair.refreshToken.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(answer.header("Cache-Control")?.contains("no-store") == true)
        let header = try #require(DriverJWT.header(pair.accessToken))
        #expect(header["alg"] as? String == "HS256")
        #expect(header["kid"] as? String == "k1")
        let claims = try #require(DriverJWT.claims(pair.accessToken))
        #expect(claims["user_id"] as? String == pair.userID)
        #expect(claims["exp"] as? Int == expiresAt)
        #expect(claims["channel"] as? String == "otp")
        #expect(claims["partner_id"] == nil)
        #expect(claims["iss"] as? String == "partner-gateway")
        #expect((claims["sid"] as? String)?.isEmpty == false)
        #expect((claims["jti"] as? String)?.isEmpty == false)

        // The code is single use.
        let reused = try await DriverAPI.verify(gateway, phone: phone, otp: "123456")
        #expect(reused.status == 401, "\(reused)")
        #expect(reused.code == "INVALID_OTP")

        // The next login is the same user, no longer new, in a new session with new tokens.
        let second = try await DriverAPI.login(gateway, phone: phone)
        #expect(second.userID == pair.userID)
        #expect(!second.isNewUser)
        #expect(second.refreshToken != pair.refreshToken)
        #expect(second.sessionID != pair.sessionID)
        // A prefixed spelling of the phone is the same user.
        let prefixed = try await DriverAPI.login(gateway, phone: "+91" + phone)
        #expect(prefixed.userID == pair.userID)
        #expect(!prefixed.isNewUser)
        // Another phone is another user.
        let other = try await DriverAPI.login(gateway, phone: "9123456781")
        #expect(other.userID != pair.userID)
        #expect(other.isNewUser)
    }

    @Test func fifthWrongAttemptLocksTheOTPUntilANewTrigger() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis))
        let phone = "8123456789"
        #expect(try await DriverAPI.trigger(gateway, phone: phone).status == 200)
        for attempt in 1...4 {
            let answer = try await DriverAPI.verify(gateway, phone: phone, otp: "00000\(attempt)")
            #expect(answer.status == 401, "attempt \(attempt): \(answer)")
            #expect(answer.code == "INVALID_OTP")
        }
        let fifth = try await DriverAPI.verify(gateway, phone: phone, otp: "000005")
        #expect(fifth.status == 429, "\(fifth)")
        #expect(fifth.code == "TOO_MANY_OTP_ATTEMPTS")
        #expect(fifth.isErrorShape)
        // Locked: the right code is refused too, more than once.
        for _ in 0..<2 {
            let right = try await DriverAPI.verify(gateway, phone: phone, otp: "123456")
            #expect(right.status == 429, "\(right)")
            #expect(right.code == "TOO_MANY_OTP_ATTEMPTS")
        }
        // A new trigger replaces the locked OTP.
        #expect(try await DriverAPI.trigger(gateway, phone: phone).status == 200)
        let pair = try DriverTokenPair(try await DriverAPI.verify(gateway, phone: phone, otp: "123456"))
        #expect(pair.isNewUser)
    }

    @Test func anExpiredOTPAnswersOTPExpired() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, otp: "{mode: uat, ttl: 1s}"))
        let phone = "7123456789"
        let clock = ContinuousClock()
        let triggeredAt = clock.now
        let sent = try await DriverAPI.trigger(gateway, phone: phone)
        #expect(sent.status == 200)
        #expect(sent.json["expires_in"] as? Int == 1)
        // Wait past the OTP's lifetime (by the clock: any verify would spend or count it).
        try await eventually(timeout: .seconds(5), interval: .milliseconds(50)) {
            clock.now - triggeredAt > .milliseconds(1300)
        }
        let expired = try await DriverAPI.verify(gateway, phone: phone, otp: "123456")
        #expect(expired.status == 401, "\(expired)")
        #expect(expired.code == "OTP_EXPIRED")
        #expect(expired.isErrorShape)
        // A fresh OTP works at once.
        #expect(try await DriverAPI.trigger(gateway, phone: phone).status == 200)
        #expect(try await DriverAPI.verify(gateway, phone: phone, otp: "123456").status == 200)
    }

    @Test func theDailyFailureBudgetSurvivesANewTrigger() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, otp: "{mode: uat, max_failures_per_day: 3}"))
        let phone = "6123456789"
        #expect(try await DriverAPI.trigger(gateway, phone: phone).status == 200)
        for attempt in 1...3 {
            let answer = try await DriverAPI.verify(gateway, phone: phone, otp: "99999\(attempt)")
            #expect(answer.status == 401, "attempt \(attempt): \(answer)")
            #expect(answer.code == "INVALID_OTP")
        }
        // A new OTP does not reset the phone's budget: even the right code is refused.
        #expect(try await DriverAPI.trigger(gateway, phone: phone).status == 200)
        let refused = try await DriverAPI.verify(gateway, phone: phone, otp: "123456")
        #expect(refused.status == 429, "\(refused)")
        #expect(refused.code == "TOO_MANY_OTP_ATTEMPTS")
        // Another phone has its own budget.
        let other = try await DriverAPI.login(gateway, phone: "6123456788")
        #expect(other.isNewUser)
    }

    @Test func fiftyParallelWrongGuessesEvaluateAtMostFour() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis))
        let phone = "9988776655"
        #expect(try await DriverAPI.trigger(gateway, phone: phone).status == 200)
        let answers = try await withThrowingTaskGroup(of: DriverResponse.self) { group in
            for index in 0..<50 {
                group.addTask {
                    try await DriverAPI.verify(gateway, phone: phone, otp: String(format: "%06d", 200_000 + index))
                }
            }
            var answers: [DriverResponse] = []
            for try await answer in group { answers.append(answer) }
            return answers
        }
        let invalid = answers.filter { $0.status == 401 && $0.code == "INVALID_OTP" }.count
        let locked = answers.filter { $0.status == 429 && $0.code == "TOO_MANY_OTP_ATTEMPTS" }.count
        print("50 parallel wrong guesses: \(invalid) × 401 INVALID_OTP, \(locked) × 429")
        #expect(answers.count == 50)
        #expect(invalid <= 4)
        #expect(invalid + locked == 50, "unexpected answers: \(answers.filter { $0.status != 401 && $0.status != 429 })")
        #expect(locked >= 46)
        // Locked: the right code does not get in either.
        let right = try await DriverAPI.verify(gateway, phone: phone, otp: "123456")
        #expect(right.status == 429, "\(right)")
        #expect(right.code == "TOO_MANY_OTP_ATTEMPTS")
    }

    @Test func registeredAndUnregisteredPhonesGetTheSameAnswers() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis))
        let registered = "9876500001"
        let unregistered = "9876500002"
        _ = try await DriverAPI.login(gateway, phone: registered)

        // No OTP outstanding for either.
        let noneA = try await DriverAPI.verify(gateway, phone: registered, otp: "123456")
        let noneB = try await DriverAPI.verify(gateway, phone: unregistered, otp: "123456")
        #expect(noneA.status == 401)
        #expect(noneA.status == noneB.status)
        #expect(noneA.canonical == noneB.canonical)

        let triggerA = try await DriverAPI.trigger(gateway, phone: registered)
        let triggerB = try await DriverAPI.trigger(gateway, phone: unregistered)
        #expect(triggerA.status == 200)
        #expect(triggerA.status == triggerB.status)
        #expect(triggerA.canonical == triggerB.canonical)
        for name in ["RateLimit-Limit", "Content-Type"] {
            #expect(triggerA.header(name) == triggerB.header(name), "\(name)")
        }

        let wrongA = try await DriverAPI.verify(gateway, phone: registered, otp: "111111")
        let wrongB = try await DriverAPI.verify(gateway, phone: unregistered, otp: "111111")
        #expect(wrongA.status == 401)
        #expect(wrongA.code == "INVALID_OTP")
        #expect(wrongA.status == wrongB.status)
        #expect(wrongA.canonical == wrongB.canonical)
        // Only the right code tells them apart, through is_new_user.
        let pairA = try DriverTokenPair(try await DriverAPI.verify(gateway, phone: registered, otp: "123456"))
        let pairB = try DriverTokenPair(try await DriverAPI.verify(gateway, phone: unregistered, otp: "123456"))
        #expect(!pairA.isNewUser)
        #expect(pairB.isNewUser)
    }

    @Test func triggerIsRateLimitedPerClientIPAndXForwardedForIsBelievedOnlyFromTrustedProxies() async throws {
        let redis = try await RedisServer()
        let limits = "{otp_trigger_per_ip: {capacity: 2, refill_per_second: 0.001}}"
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, rateLimits: limits))
        func trigger(_ phone: String, forwardedFor: String?) async throws -> DriverResponse {
            try await DriverAPI.post(
                gateway, "/auth/otp/trigger", body: DriverHTTP.json(["phone": phone]),
                headers: forwardedFor.map { [("X-Forwarded-For", $0)] } ?? []
            )
        }
        #expect(try await trigger("9000000011", forwardedFor: nil).status == 200)
        #expect(try await trigger("9000000012", forwardedFor: "203.0.113.7").status == 200)
        // Every phone from this IP is now refused, whatever X-Forwarded-For claims.
        for (phone, forwarded) in [("9000000013", nil), ("9000000014", "203.0.113.8"), ("9000000015", "198.51.100.1, 203.0.113.9")] {
            let refused = try await trigger(phone, forwardedFor: forwarded)
            #expect(refused.status == 429, "\(phone) via \(forwarded ?? "-"): \(refused)")
            #expect(refused.code == "RATE_LIMIT_EXCEEDED")
            #expect((refused.header("Retry-After").flatMap { Int($0) } ?? 0) >= 1)
        }

        // Behind a trusted proxy, each forwarded client has its own bucket.
        let proxyRedis = try await RedisServer()
        let proxied = try await GatewayProcess(yaml: DriverYAML.make(
            redis: proxyRedis, rateLimits: limits, extra: "trusted_proxies: [127.0.0.1/32]"
        ))
        for client in ["203.0.113.1", "203.0.113.2"] {
            for index in 0..<2 {
                let answer = try await DriverAPI.post(
                    proxied, "/auth/otp/trigger", body: DriverHTTP.json(["phone": "90000001\(client.suffix(1))\(index)"]),
                    headers: [("X-Forwarded-For", client)]
                )
                #expect(answer.status == 200, "\(client) #\(index): \(answer)")
            }
        }
        let refused = try await DriverAPI.post(
            proxied, "/auth/otp/trigger", body: DriverHTTP.json(["phone": "9000000199"]),
            headers: [("X-Forwarded-For", "203.0.113.1")]
        )
        #expect(refused.status == 429, "\(refused)")
    }

    @Test func triggerIsRateLimitedPerPhone() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(
            redis: redis,
            rateLimits: "{otp_trigger_per_phone: {capacity: 2, refill_per_second: 0.001}}"
        ))
        let phone = "9000000001"
        for expected in [1, 0] {
            let answer = try await DriverAPI.trigger(gateway, phone: phone)
            #expect(answer.status == 200, "\(answer)")
            #expect(answer.header("RateLimit-Remaining").flatMap { Int($0) } == expected, "\(answer.headers)")
            #expect(answer.header("RateLimit-Limit") == "2")
        }
        let refused = try await DriverAPI.trigger(gateway, phone: phone)
        #expect(refused.status == 429, "\(refused)")
        #expect(refused.code == "RATE_LIMIT_EXCEEDED")
        #expect(refused.isErrorShape)
        let retryAfter = try #require(refused.header("Retry-After").flatMap { Int($0) }, "\(refused.headers)")
        #expect(retryAfter >= 1)
        #expect(refused.header("RateLimit-Remaining") == "0")
        // The prefixed spelling is the same phone, so the same bucket.
        #expect(try await DriverAPI.trigger(gateway, phone: "+91" + phone).status == 429)
        // Another phone is unaffected.
        #expect(try await DriverAPI.trigger(gateway, phone: "9000000002").status == 200)
        // The OTP sent before the refusal is still the phone's and still works.
        #expect(try await DriverAPI.verify(gateway, phone: phone, otp: "123456").status == 200)
    }
}
