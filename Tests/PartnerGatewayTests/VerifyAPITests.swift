import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// `POST /v1/verify` on the authorization listener (docs/edges.md), against real processes:
/// every field for a good key and a good token, each refusal code a proxied request would get,
/// only a `verifier` credential may call it (and it may call nothing else), and failed
/// verifications spend the caller's failed-key budget.
@Suite("Edges: the verify API", .realProcesses)
struct VerifyAPITests {
    static func verify(_ gateway: GatewayProcess, token: String, _ body: [String: Any], forwardedFor: String? = nil) async throws -> DriverResponse {
        var headers = [("Authorization", "Bearer \(token)")]
        if let forwardedFor { headers.append(("X-Forwarded-For", forwardedFor)) }
        return try await DriverHTTP.call(gateway.authzURL + "/v1/verify", method: .POST, headers: headers, body: DriverHTTP.json(body))
    }

    /// Every key of the answer, `null`s included (`NSNull`).
    static let fields: Set<String> = ["valid", "code", "key_id", "partner_id", "user_id", "scopes", "quota", "rate_limit"]

    @Test func everyFieldForAGoodKeyAndAGoodTokenAndEachRefusalCode() async throws {
        let setup = try await EdgeSetup.start()
        defer { setup.upstream.stop() }
        let gateway = setup.gateway
        let verifier = try await AdminRoleTests.credential(gateway, name: "orders-service", role: "verifier").token
        let (partnerID, keyID, key) = try await setup.partnerAndKey()
        let (_, limitedID, limited) = try await setup.partnerAndKey()
        _ = try await PartnerControlsProcessTests.admin(gateway, .PATCH, "/v1/keys/\(limitedID)", #"{"quota": {"limit": 2, "period": "day"}, "allowed_cidrs": ["127.0.0.1/32"]}"#)

        // The credential alone: nothing spent, no limits shown.
        let good = try await Self.verify(gateway, token: verifier, ["api_key": key, "scope": "orders:read"])
        #expect(good.status == 200, "\(good)")
        #expect(Set(good.json.keys) == Self.fields, "\(good)")
        #expect(good.json["valid"] as? Bool == true && good.json["code"] is NSNull)
        #expect(good.string("key_id") == keyID && good.string("partner_id") == partnerID && good.json["user_id"] is NSNull)
        #expect(good.json["scopes"] as? [String] == ["orders:read"])
        #expect(good.json["quota"] is NSNull && good.json["rate_limit"] is NSNull, "\(good)")

        // On a route: its admission, its quota spent and shown.
        let onRoute = try await Self.verify(gateway, token: verifier, ["api_key": limited, "route": "orders"])
        #expect(onRoute.json["valid"] as? Bool == true, "\(onRoute)")
        let quota = try #require(onRoute.json["quota"] as? [String: Any], "\(onRoute)")
        #expect(quota["limit"] as? Int == 2 && quota["remaining"] as? Int == 1 && (quota["reset"] as? Int ?? 0) > 0, "\(quota)")
        #expect(onRoute.json["rate_limit"] is NSNull)
        #expect(try await Self.verify(gateway, token: verifier, ["api_key": limited, "route": "orders"]).json["valid"] as? Bool == true)
        let spent = try await Self.verify(gateway, token: verifier, ["api_key": limited, "route": "orders"])
        #expect(spent.status == 200 && spent.json["valid"] as? Bool == false && spent.string("code") == "QUOTA_EXCEEDED", "\(spent)")
        #expect((spent.json["quota"] as? [String: Any])?["remaining"] as? Int == 0, "\(spent)")
        #expect(spent.json["key_id"] is NSNull)
        // Verifications on a route are counted in the key's usage as calls on it are.
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.timeZone = TimeZone(identifier: "UTC")
        let today = formatter.string(from: Date())
        try await eventually(timeout: .seconds(5)) {
            let usage = try await DriverAPI.admin(gateway, .GET, "/v1/keys/\(limitedID)/usage?from=\(today)&to=\(today)")
            let day = (usage.json["days"] as? [[String: Any]])?.first
            return day?["allowed"] as? Int == 2 && day?["refused_quota"] as? Int == 1
        }

        // A driver's token, on a limited route: the route's bucket.
        let login = try await DriverAPI.login(gateway, phone: "9876500401")
        let driver = try await Self.verify(gateway, token: verifier, ["access_token": login.accessToken, "route": "rides"])
        #expect(Set(driver.json.keys) == Self.fields && driver.json["valid"] as? Bool == true, "\(driver)")
        #expect(driver.string("user_id") == login.userID && driver.json["key_id"] is NSNull && driver.json["scopes"] is NSNull)
        let bucket = try #require(driver.json["rate_limit"] as? [String: Any], "\(driver)")
        #expect(bucket["limit"] as? Int == 2 && bucket["remaining"] as? Int == 1, "\(bucket)")
        _ = try await Self.verify(gateway, token: verifier, ["access_token": login.accessToken, "route": "rides"])
        let limitedDriver = try await Self.verify(gateway, token: verifier, ["access_token": login.accessToken, "route": "rides"])
        #expect(limitedDriver.string("code") == "RATE_LIMIT_EXCEEDED" && (limitedDriver.json["rate_limit"] as? [String: Any])?["remaining"] as? Int == 0, "\(limitedDriver)")

        let revoked = try await DriverAPI.login(gateway, phone: "9876500402")
        #expect(try await DriverAPI.logout(gateway, access: revoked.accessToken).status == 204)
        let (_, _, unscoped) = try await setup.partnerAndKey(scopes: [])
        for (body, code) in [
            (["api_key": "pgk_live_nope"], "INVALID_API_KEY"),
            (["api_key": ""], "MISSING_API_KEY"),
            (["api_key": unscoped, "scope": "orders:read"], "FORBIDDEN"),
            (["api_key": unscoped, "route": "orders"], "FORBIDDEN"),
            (["access_token": "not-a-token"], "INVALID_TOKEN"),
            (["access_token": revoked.accessToken], "INVALID_TOKEN"),
            (["api_key": key, "route": "user-profile"], "MISSING_TOKEN"),
        ] as [([String: Any], String)] {
            let refused = try await Self.verify(gateway, token: verifier, body)
            #expect(refused.status == 200 && refused.json["valid"] as? Bool == false && refused.string("code") == code, "\(body): \(refused)")
            #expect(Set(refused.json.keys) == Self.fields && refused.json["partner_id"] is NSNull, "\(refused)")
        }
        // The allowlist is checked against the client the caller's trusted proxy names.
        let outside = try await Self.verify(gateway, token: verifier, ["api_key": limited], forwardedFor: "198.51.100.4")
        #expect(outside.string("code") == "FORBIDDEN", "\(outside)")

        // Bad calls are the caller's mistakes.
        for body in [[:], ["api_key": key, "access_token": login.accessToken], ["api_key": key, "route": "no-such-route"],
                     ["api_key": key, "route": "orders", "scope": "other:scope"], ["api_key": 7]] as [[String: Any]] {
            let bad = try await Self.verify(gateway, token: verifier, body)
            #expect(bad.status == 400 && bad.code == "INVALID_REQUEST" && bad.isErrorShape, "\(body): \(bad)")
        }
        let metrics = try await DriverHTTP.call(gateway.adminURL + "/metrics")
        #expect(metrics.text.contains(#"gateway_authorization_decisions_total{kind="verify",route="orders",decision="refused",reason="QUOTA_EXCEEDED"} 1"#), "\(metrics.text.split(separator: "\n").filter { $0.contains("authorization_decisions") })")
        #expect(metrics.text.contains(#"gateway_authorization_decisions_total{kind="verify",route="none",decision="allowed",reason="ok"} 1"#))
        // The access lines (written at most a second later): the endpoint, the decision, the key.
        try await eventually(timeout: .seconds(5)) {
            gateway.log.split(separator: "\n").contains {
                $0.contains(#""listener":"authz""#) && $0.contains(#""route":"/v1/verify""#) && $0.contains(#""decision":"allowed""#)
                    && $0.contains(#""key_id":"\#(keyID)""#)
            }
        }
        #expect(gateway.log.contains(#""auth":"QUOTA_EXCEEDED""#))
    }

    @Test func onlyAVerifierMayVerifyAndAVerifierMayDoNothingElse() async throws {
        let setup = try await EdgeSetup.start()
        defer { setup.upstream.stop() }
        let gateway = setup.gateway
        let (_, _, key) = try await setup.partnerAndKey()
        let body = ["api_key": key]
        let verifier = try await AdminRoleTests.credential(gateway, name: "verifier", role: "verifier")
        #expect(try await Self.verify(gateway, token: verifier.token, body).json["valid"] as? Bool == true)
        for role in ["owner", "operator", "support", "auditor"] {
            let other = try await AdminRoleTests.credential(gateway, name: "as-\(role)", role: role).token
            let refused = try await Self.verify(gateway, token: other, body)
            #expect(refused.status == 403 && refused.code == "FORBIDDEN" && refused.isErrorShape, "\(role): \(refused)")
        }
        let breakGlass = try await Self.verify(gateway, token: GatewayProcess.adminToken, body)
        #expect(breakGlass.status == 403, "the break-glass owner too: \(breakGlass)")
        for token in ["", "pga_live_" + String(repeating: "A", count: 43) + "_000000", key] {
            #expect(try await Self.verify(gateway, token: token, body).status == 401)
        }
        // On the admin listener a verifier is refused everything, and there is no verify API there.
        for (method, path) in [(HTTPMethod.GET, "/v1/partners"), (.GET, "/v1/status"), (.POST, "/v1/keys/find"), (.GET, "/v1/admins")] {
            let answer = try await AdminRoleTests.call(gateway, verifier.token, method, path, body: method == .GET ? nil : "{}")
            #expect(answer.status == 403, "\(method) \(path): \(answer)")
        }
        #expect(try await AdminRoleTests.call(gateway, GatewayProcess.adminToken, .POST, "/v1/verify", body: DriverHTTP.json(body)).status == 404)
        // A revoked verifier stops working within the second the listener keeps it.
        _ = try await PartnerControlsProcessTests.admin(gateway, .POST, "/v1/admins/\(verifier.id)/revoke")
        try await eventually(timeout: .seconds(3)) { try await Self.verify(gateway, token: verifier.token, body).status == 401 }
    }

    @Test func failedVerificationsSpendTheCallersFailedKeyBudget() async throws {
        // The shipped budget (10), refilled too slowly for a token to come back during the test.
        let setup = try await EdgeSetup.start(rateLimits: "{api_key_failures_per_ip: {capacity: 10, refill_per_second: 0.001}}")
        defer { setup.upstream.stop() }
        let gateway = setup.gateway
        let verifier = try await AdminRoleTests.credential(gateway, name: "verifier", role: "verifier").token
        let (_, _, key) = try await setup.partnerAndKey()
        // A good key verified once is known to this instance: it still verifies when blocked.
        #expect(try await Self.verify(gateway, token: verifier, ["api_key": key]).json["valid"] as? Bool == true)
        var statuses: [UInt] = []
        for attempt in 0..<50 {
            let forged = "pgk_live_" + String(repeating: "B", count: 40) + String(format: "%02d", attempt)
            statuses.append(try await Self.verify(gateway, token: verifier, ["api_key": forged]).status)
        }
        let answered = statuses.filter { $0 == 200 }.count
        #expect(answered <= 10, "the budget is 10 failed keys per address: \(statuses)")
        #expect(statuses.suffix(30).allSatisfy { $0 == 429 }, "\(statuses)")
        let blocked = try await Self.verify(gateway, token: verifier, ["api_key": "pgk_live_" + String(repeating: "C", count: 42)])
        #expect(blocked.status == 429 && blocked.code == "RATE_LIMIT_EXCEEDED" && blocked.isErrorShape, "\(blocked)")
        #expect(Int(blocked.header("Retry-After") ?? "") ?? 0 >= 1, "\(blocked.headers)")
        #expect(try await Self.verify(gateway, token: verifier, ["api_key": key]).json["valid"] as? Bool == true)
    }
}
