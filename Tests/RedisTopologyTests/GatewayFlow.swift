import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// Every flow that touches Redis, once, against one gateway: what must keep working whatever
/// Redis the gateway runs on (TLS, an ACL user, Sentinel, Cluster).
///
/// Each step checks its own responses; a broken step fails the test with its name.
struct GatewayFlow {
    let gateway: GatewayProcess

    /// A gateway configuration for `redis` (its url, and any extra `redis:` keys) with UAT
    /// OTPs, a bearer route, a bearer route limited to 2 calls per user, an API-key route and
    /// the partner portal (UAT codes).
    static func yaml(redisURL: String, redisExtra: String = "", timeout: String = "2s", upstream: EchoUpstreamProcess) -> String {
        """
        redis:
          url: \(redisURL)
          timeout: \(timeout)
        \(redisExtra.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
        otp:
          mode: uat
        log:
          access_log: false
        rate_limits:
          otp_trigger_per_phone: {capacity: 1000, refill_per_second: 100}
          otp_trigger_per_ip: {capacity: 100000, refill_per_second: 10000}
          otp_verify_failures_per_ip: {capacity: 100000, refill_per_second: 10000}
          api_key_failures_per_ip: {capacity: 100000, refill_per_second: 10000}
        portal: {enabled: true, origin: "\(PortalAPI.origin)", delivery: uat}
        routes:
          - {name: user-profile, path_prefix: /user, upstream: \(upstream.url), auth: bearer}
          - {name: limited, path_prefix: /limited, upstream: \(upstream.url), auth: bearer, rate_limit: {per: user, capacity: 2, refill_per_second: 0.001}}
          - {name: reports, path_prefix: /reports, upstream: \(upstream.url), auth: api_key}

        """
    }

    /// Runs every step; `phonePrefix` (6 digits starting 6-9) keeps runs on one Redis apart.
    func run(phonePrefix: String = "987650") async throws {
        let ready = try await DriverHTTP.call(gateway.baseURL + "/readyz")
        #expect(ready.status == 200, "readyz: \(ready)")

        // Partner and key (admin API: HSET, SADD, XADD for the audit log, ...).
        let partnerID = try await DriverAPI.createPartner(gateway, name: "FlowCo")
        let key = try await DriverAPI.createKey(gateway, partnerID: partnerID)
        let identity = try await Self.whoami(gateway, key: key)
        #expect(identity.status == 200, "whoami: \(identity)")
        let proxied = try await DriverHTTP.call(gateway.baseURL + "/reports/daily", headers: [("X-API-Key", key)])
        #expect(proxied.status == 200, "API-key route: \(proxied)")
        let keys = try await DriverAPI.admin(gateway, .GET, "/v1/partners/\(partnerID)/keys")
        #expect(keys.status == 200, "list keys: \(keys)")
        let audit = try await DriverAPI.admin(gateway, .GET, "/v1/audit")
        #expect(audit.status == 200, "audit: \(audit)")

        // SDK mint, OTP login, a bearer call.
        let minted = try DriverTokenPair(try await DriverAPI.mint(gateway, key: key, phone: "\(phonePrefix)0001", driverID: "NY-1"))
        #expect(try await DriverAPI.profile(gateway, token: minted.accessToken).status == 200)
        let login = try await DriverAPI.login(gateway, phone: "\(phonePrefix)0002")
        #expect(try await DriverAPI.profile(gateway, token: login.accessToken).status == 200)

        // Refresh rotation (twice), a retry of the last refresh within the reuse interval
        // (the same current token back), then reuse of an older token revokes the whole login.
        let rotated = try DriverTokenPair(try await DriverAPI.refresh(gateway, login.refreshToken))
        let current = try DriverTokenPair(try await DriverAPI.refresh(gateway, rotated.refreshToken))
        let retried = try DriverTokenPair(try await DriverAPI.refresh(gateway, rotated.refreshToken))
        #expect(retried.refreshToken == current.refreshToken, "a retry gets the current token")
        let reuse = try await DriverAPI.refresh(gateway, login.refreshToken)
        #expect(reuse.status == 401, "reuse: \(reuse)")
        let afterReuse = try await DriverAPI.refresh(gateway, current.refreshToken)
        #expect(afterReuse.status == 401, "refresh after reuse: \(afterReuse)")

        // Logout ends the session's access token.
        let other = try await DriverAPI.login(gateway, phone: "\(phonePrefix)0003")
        let logout = try await DriverAPI.logout(gateway, access: other.accessToken)
        #expect(logout.status == 204, "logout: \(logout)")
        #expect(try await DriverAPI.profile(gateway, token: other.accessToken).status == 401)

        // Admin revocation of every session of a user.
        let revoked = try await DriverAPI.login(gateway, phone: "\(phonePrefix)0004")
        let revoke = try await DriverAPI.admin(gateway, .POST, "/v1/users/\(revoked.userID)/revoke-sessions")
        #expect(revoke.status == 200, "revoke sessions: \(revoke)")
        #expect(try await DriverAPI.profile(gateway, token: revoked.accessToken).status == 401)
        #expect(try await DriverAPI.refresh(gateway, revoked.refreshToken).status == 401)

        // A route limit: exactly 2 calls, then 429.
        let limited = try await DriverAPI.login(gateway, phone: "\(phonePrefix)0005")
        var statuses: [UInt] = []
        for _ in 0..<3 {
            statuses.append(try await DriverHTTP.call(gateway.baseURL + "/limited/x", headers: [("Authorization", "Bearer \(limited.accessToken)")]).status)
        }
        #expect(statuses == [200, 200, 429], "route limit: \(statuses)")

        // A partner's own limit on SDK mints: its burst of 2, then 429.
        let slowPartner = try await DriverAPI.createPartner(gateway, name: "SlowCo", rate: 0.001, burst: 2)
        let slowKey = try await DriverAPI.createKey(gateway, partnerID: slowPartner)
        statuses = []
        for driver in 0..<3 {
            statuses.append(try await DriverAPI.mint(gateway, key: slowKey, phone: "\(phonePrefix)0006", driverID: "NY-\(driver)").status)
        }
        #expect(statuses == [200, 200, 429], "partner limit: \(statuses)")

        // Key rotation without grace: the new key works, the old one stops (through pub/sub).
        let keyID = try #require(identity.string("key_id"))
        let rotation = try await DriverAPI.admin(gateway, .POST, "/v1/keys/\(keyID)/rotate", body: #"{"grace": "0"}"#)
        #expect(rotation.status == 200, "rotate key: \(rotation)")
        let rotatedKey = try #require(rotation.string("key"))
        let rotatedKeyID = try #require(rotation.string("key_id"))
        #expect(try await Self.whoami(gateway, key: rotatedKey).status == 200)
        try await eventually(timeout: .seconds(1)) { try await Self.whoami(gateway, key: key).status == 401 }

        // Key revocation reaches the gateway's key cache through pub/sub.
        let revokeKey = try await DriverAPI.admin(gateway, .POST, "/v1/keys/\(rotatedKeyID)/revoke")
        #expect(revokeKey.status == 200, "revoke key: \(revokeKey)")
        try await eventually(timeout: .seconds(1)) { try await Self.whoami(gateway, key: rotatedKey).status == 401 }

        try await portal(phonePrefix: phonePrefix)
    }

    /// The portal: a member invited, signed in (a code, a session in the member's slot), a key
    /// made under the partner's lock and changed, the partner's own audit paged, the member
    /// removed with their session, and a disabled partner's sessions ended.
    private func portal(phonePrefix: String) async throws {
        let partnerID = try await DriverAPI.createPartner(gateway, name: "PortalCo")
        let email = "flow\(phonePrefix)@flowco.example"
        let member = try await PortalAPI.member(gateway, partnerID: partnerID, email: email, role: "partner_admin")
        let created = try await PortalAPI.call(gateway, .POST, "/keys", as: member, body: #"{"name": "portal"}"#)
        #expect(created.status == 201, "portal key: \(created)")
        let keyID = try #require(created.string("key_id"))
        let patched = try await PortalAPI.call(gateway, .PATCH, "/keys/\(keyID)", as: member, body: #"{"allowed_cidrs": ["127.0.0.1/32"]}"#)
        #expect(patched.status == 200, "portal key update: \(patched)")
        let widened = try await PortalAPI.call(gateway, .POST, "/keys", as: member, body: #"{"scopes": ["not:granted"]}"#)
        #expect(widened.status == 400, "a scope beyond the grant, audited: \(widened)")
        let page = try await PortalAPI.call(gateway, .GET, "/audit?limit=1", as: member)
        let cursor = try #require(page.json["next_cursor"] as? String, "portal audit: \(page)")
        #expect(try await PortalAPI.call(gateway, .GET, "/audit?limit=5&after=\(cursor)", as: member).status == 200)
        let usage = try await PortalAPI.call(gateway, .GET, "/usage?from=2026-01-01&to=2026-01-02", as: member)
        #expect(usage.status == 200, "portal usage: \(usage)")

        let removed = try await DriverAPI.admin(gateway, .DELETE, "/v1/partners/\(partnerID)/members/\(member.memberID)")
        #expect(removed.status == 204, "remove member: \(removed)")
        #expect(try await PortalAPI.call(gateway, .GET, "/me", as: member).status == 401)
        let again = try await PortalAPI.member(gateway, partnerID: partnerID, email: email, role: "viewer")
        #expect(try await DriverAPI.admin(gateway, .POST, "/v1/partners/\(partnerID)/disable").status == 200)
        #expect(try await PortalAPI.call(gateway, .GET, "/me", as: again).status == 401)
    }

    /// `GET /partner/v1/whoami` with `key`: how the tests ask whether a key works.
    static func whoami(_ gateway: GatewayProcess, key: String) async throws -> DriverResponse {
        try await DriverHTTP.call(gateway.baseURL + "/partner/v1/whoami", headers: [("X-API-Key", key)])
    }
}
