import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// Portal sign-in and sessions against real processes (docs/portal.md, "Sessions"): the code
/// through the signed webhook, the `pg_portal` cookie, the CSRF checks, the caps on guessing,
/// sign-out and the lifetimes.
@Suite("Portal: sign-in, sessions and their CSRF checks", .realProcesses)
struct PortalSessionTests {
    static let webhookSecret = "test-portal-webhook-secret-0123456789abcdef"

    @Test func aMemberSignsInWithTheCodeFromTheWebhookAndNobodyElseIsTold() async throws {
        let redis = try await RedisServer()
        try await DriverSMSWebhook.serve { webhook, port in
            let gateway = try await GatewayProcess(
                yaml: PortalAPI.yaml(redis: redis, webhook: "http://127.0.0.1:\(port)/sms"),
                environment: ["GATEWAY_PORTAL_WEBHOOK_SECRET": Self.webhookSecret]
            )
            let partner = try await DriverAPI.createPartner(gateway, name: "Acme")
            let memberID = try await PortalAPI.invite(gateway, partnerID: partner, email: "asha@acme.example", name: "Asha", role: "developer")

            // A member's address and anyone else's get the same answer, byte for byte.
            let known = try await PortalAPI.call(gateway, .POST, "/session/code", body: #"{"email": "Asha@Acme.example"}"#)
            let unknown = try await PortalAPI.call(gateway, .POST, "/session/code", body: #"{"email": "nobody@acme.example"}"#)
            #expect(known.status == 202 && unknown.status == 202)
            #expect(known.text == unknown.text && known.text == #"{"status":"accepted","expires_in":600}"#)
            #expect(known.header("Cache-Control") == "no-store")
            try await eventually(timeout: .seconds(10)) { await webhook.lastCode(toEmail: "asha@acme.example") != nil }
            let code = try #require(await webhook.lastCode(toEmail: "asha@acme.example"))
            #expect(await webhook.bodies.count == 1, "nothing goes to an address that is no member's")
            let body = try #require(await webhook.bodies.first)
            let message = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: String])
            #expect(Set(message.keys) == ["email", "message"])
            // Signed as the SMS webhook's calls are: t=<seconds>,v1=<HMAC-SHA256 of "t.body">.
            let signature = try #require(await webhook.signatures.first ?? nil)
            #expect(signature.hasPrefix("t=") && signature.contains(",v1="))
            #expect(!gateway.log.contains(code) && !gateway.log.contains("asha@acme.example"), "neither the code nor the address is logged")

            let wrong = try await PortalAPI.call(gateway, .POST, "/session", body: DriverHTTP.json(["email": "asha@acme.example", "code": code == "000000" ? "000001" : "000000"]))
            #expect(wrong.status == 401 && wrong.code == "INVALID_OTP" && wrong.isErrorShape, "\(wrong)")
            let answer = try await PortalAPI.call(gateway, .POST, "/session", body: DriverHTTP.json(["email": "asha@acme.example", "code": code]))
            #expect(answer.status == 200, "\(answer)")
            #expect(Set(answer.json.keys) == ["member_id", "partner_id", "role", "expires_at"])
            #expect(answer.string("member_id") == memberID && answer.string("partner_id") == partner && answer.string("role") == "developer")
            let cookie = try #require(answer.headers["Set-Cookie"].first)
            let parts = cookie.split(separator: "; ").map(String.init)
            #expect(parts[0].hasPrefix("pg_portal=\(memberID)."))
            #expect(Array(parts.dropFirst()) == ["Max-Age=43200", "Path=/portal", "HttpOnly", "Secure", "SameSite=Strict"])
            #expect(!answer.text.contains(String(parts[0].dropFirst("pg_portal=".count))), "the session is in the cookie only")

            // The code is spent; the address that is no member's never signs in, even with a code.
            let again = try await PortalAPI.call(gateway, .POST, "/session", body: DriverHTTP.json(["email": "asha@acme.example", "code": code]))
            #expect(again.status == 401 && again.code == "INVALID_OTP")
            let me = try await DriverHTTP.call(gateway.baseURL + "/portal/v1/me", headers: [("Cookie", parts[0]), ("Sec-Fetch-Site", "same-origin")])
            #expect(me.status == 200 && (me.json["member"] as? [String: Any])?["email"] as? String == "asha@acme.example", "\(me)")
        }
    }

    @Test func callsFromAnywhereButThePortalsPagesAreRefusedAndChangeNothing() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: PortalAPI.yaml(redis: redis))
        let partner = try await DriverAPI.createPartner(gateway, name: "Acme")
        let member = try await PortalAPI.member(gateway, partnerID: partner, email: "asha@acme.example", role: "partner_admin")
        try await RedisSnapshot.awaitFullBuckets(redis)
        let before = try await RedisSnapshot.take(redis)

        let create = DriverHTTP.json(["name": "forged"])
        let refusals: [(String, DriverResponse)] = [
            ("another origin", try await PortalAPI.call(gateway, .POST, "/keys", as: member, body: create, origin: "https://evil.example")),
            ("no origin", try await PortalAPI.call(gateway, .POST, "/keys", as: member, body: create, origin: nil)),
            ("no origin, same-origin fetch (browsers always send Origin on a POST)",
             try await PortalAPI.call(gateway, .POST, "/keys", as: member, body: create, origin: nil, headers: [("Sec-Fetch-Site", "same-origin")])),
            ("cross-site fetch", try await PortalAPI.call(gateway, .POST, "/keys", as: member, body: create, headers: [("Sec-Fetch-Site", "cross-site")])),
            ("cross-site fetch, any case", try await PortalAPI.call(gateway, .POST, "/keys", as: member, body: create, headers: [("Sec-Fetch-Site", "Cross-Site")])),
            ("the origin's http twin", try await PortalAPI.call(gateway, .POST, "/keys", as: member, body: create, origin: "http://partners.example.com")),
            ("a read with no origin", try await PortalAPI.call(gateway, .GET, "/keys", as: member, origin: nil)),
            ("a read from another site", try await PortalAPI.call(gateway, .GET, "/keys", as: member, origin: nil, headers: [("Sec-Fetch-Site", "same-site")])),
            ("a sign-out from another origin", try await PortalAPI.call(gateway, .DELETE, "/session", as: member, origin: "https://evil.example")),
            ("a code request from another origin", try await PortalAPI.call(gateway, .POST, "/session/code", body: #"{"email": "asha@acme.example"}"#, origin: "null")),
        ]
        for (label, answer) in refusals {
            #expect(answer.status == 403 && answer.code == "FORBIDDEN" && answer.isErrorShape, "\(label): \(answer)")
        }
        #expect(try await RedisSnapshot.take(redis) == before, "a refused call changes nothing")

        // The portal's own page: Origin on writes; a same-origin read carries none, and passes
        // on Sec-Fetch-Site.
        let read = try await PortalAPI.call(gateway, .GET, "/keys", as: member, origin: nil, headers: [("Sec-Fetch-Site", "same-origin")])
        #expect(read.status == 200, "\(read)")
        #expect(try await PortalAPI.call(gateway, .POST, "/keys", as: member, body: create).status == 201)
        // A planted second cookie of the name is refused, whichever comes first.
        let twice = try await PortalAPI.call(gateway, .GET, "/me", headers: [("Cookie", "\(member.cookie); pg_portal=mbr_0000000000000000.\(String(repeating: "a", count: 64))")])
        #expect(twice.status == 400 && twice.isErrorShape, "\(twice)")
        // Without a session: 401 in the error shape.
        let none = try await PortalAPI.call(gateway, .GET, "/me")
        #expect(none.status == 401 && none.code == "UNAUTHORIZED" && none.isErrorShape)
    }

    /// Codes are capped exactly as drivers' OTPs: wrong attempts lock a code, and an address's
    /// failures are budgeted across every email.
    @Test func guessingACodeIsCappedAsAnOTPIs() async throws {
        let redis = try await RedisServer()
        let limits = "{otp_trigger_per_phone: {capacity: 100, refill_per_second: 10}, otp_trigger_per_ip: {capacity: 1000, refill_per_second: 100}, "
            + "otp_verify_failures_per_ip: {capacity: 8, refill_per_second: 0.001}}"
        let gateway = try await GatewayProcess(yaml: PortalAPI.yaml(redis: redis, rateLimits: limits, trustedProxies: true))
        let partner = try await DriverAPI.createPartner(gateway, name: "Acme")
        _ = try await PortalAPI.invite(gateway, partnerID: partner, email: "asha@acme.example", role: "viewer")
        let from = [("X-Forwarded-For", "198.51.100.7")]
        func guess(_ email: String, _ code: String, headers: [(String, String)] = from) async throws -> DriverResponse {
            try await PortalAPI.call(gateway, .POST, "/session", body: DriverHTTP.json(["email": email, "code": code]), headers: headers)
        }

        #expect(try await PortalAPI.call(gateway, .POST, "/session/code", body: #"{"email": "asha@acme.example"}"#).status == 202)
        for attempt in 1...4 {
            let answer = try await guess("asha@acme.example", "000001")
            #expect(answer.status == 401 && answer.code == "INVALID_OTP", "attempt \(attempt): \(answer)")
        }
        // otp.max_attempts (5): the fifth wrong attempt locks the code, even the right one then.
        #expect(try await guess("asha@acme.example", "000001").status == 429)
        let locked = try await guess("asha@acme.example", DriverAPI.uatCode)
        #expect(locked.status == 429 && locked.code == "TOO_MANY_OTP_ATTEMPTS" && locked.isErrorShape, "\(locked)")

        // The address's failure budget (8 here) holds across addresses: past it, even a right
        // code from that address is 429 until it refills.
        _ = try await guess("other@acme.example", "000002")
        _ = try await guess("third@acme.example", "000003")
        let budget = try await guess("fourth@acme.example", "000004")
        #expect(budget.status == 429 && budget.header("Retry-After") != nil, "\(budget)")
        #expect(try await PortalAPI.call(gateway, .POST, "/session/code", body: #"{"email": "asha@acme.example"}"#).status == 202)
        #expect(try await guess("asha@acme.example", DriverAPI.uatCode).status == 429)
        // From another address the right code signs in.
        let elsewhere = try await guess("asha@acme.example", DriverAPI.uatCode, headers: [("X-Forwarded-For", "198.51.100.8")])
        #expect(elsewhere.status == 200, "\(elsewhere)")
    }

    @Test func signOutEndsTheSession() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: PortalAPI.yaml(redis: redis))
        let partner = try await DriverAPI.createPartner(gateway, name: "Acme")
        let member = try await PortalAPI.member(gateway, partnerID: partner, email: "asha@acme.example", role: "viewer")
        let out = try await PortalAPI.call(gateway, .DELETE, "/session", as: member)
        #expect(out.status == 204)
        #expect(out.headers["Set-Cookie"] == ["pg_portal=; Max-Age=0; Path=/portal; HttpOnly; Secure; SameSite=Strict"])
        let after = try await PortalAPI.call(gateway, .GET, "/me", as: member)
        #expect(after.status == 401 && after.code == "UNAUTHORIZED")
        #expect(try await PortalAPI.call(gateway, .DELETE, "/session", as: member).status == 401)
    }
}
