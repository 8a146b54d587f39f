import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// A partner's members never widen what the operator granted it (docs/portal.md, "Limits"),
/// against real processes: wider scopes, a quota above the partner's, an allowlist wider than
/// its and a key past `max_keys` are refused in the error shape and recorded, with the member
/// as actor, in the refusals trail and the partner's own audit.
@Suite("Portal: a member stays within the partner's grant", .realProcesses)
struct PortalLimitsTests {
    @Test func wideningIsRefusedAndAudited() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: PortalAPI.yaml(redis: redis))
        let partner = try await DriverAPI.createPartner(gateway, name: "Acme")
        let granted = try await DriverAPI.admin(gateway, .PATCH, "/v1/partners/\(partner)", body: DriverHTTP.json([
            "scopes": ["orders:read", "orders:write"], "allowed_cidrs": ["203.0.113.0/24"], "quota": ["limit": 1000, "period": "day"], "max_keys": 2,
        ]))
        #expect(granted.status == 200 && granted.json["max_keys"] as? Int == 2, "\(granted)")
        let member = try await PortalAPI.member(gateway, partnerID: partner, email: "dev@acme.example", role: "developer")

        let created = try await PortalAPI.call(gateway, .POST, "/keys", as: member, body: DriverHTTP.json(["name": "first", "scopes": ["orders:read"]]))
        #expect(created.status == 201, "\(created)")
        let keyID = try #require(created.string("key_id"))

        let attempts: [(label: String, method: HTTPMethod, path: String, body: String, status: UInt, code: String)] = [
            ("a scope the partner lacks", .POST, "/keys", DriverHTTP.json(["scopes": ["orders:read", "admin:all"]]), 400, "INVALID_REQUEST"),
            ("a key's scopes beyond the partner's", .PATCH, "/keys/\(keyID)", DriverHTTP.json(["scopes": ["orders:write", "payouts:send"]]), 400, "INVALID_REQUEST"),
            ("a quota above the partner's", .PATCH, "/keys/\(keyID)", DriverHTTP.json(["quota": ["limit": 5000, "period": "day"]]), 400, "INVALID_REQUEST"),
            ("an allowlist wider than the partner's", .PATCH, "/keys/\(keyID)", DriverHTTP.json(["allowed_cidrs": ["203.0.0.0/16"]]), 400, "INVALID_REQUEST"),
            ("an allowlist beside the partner's", .PATCH, "/keys/\(keyID)", DriverHTTP.json(["allowed_cidrs": ["203.0.113.0/25", "198.51.100.1"]]), 400, "INVALID_REQUEST"),
        ]
        for attempt in attempts {
            let answer = try await PortalAPI.call(gateway, attempt.method, attempt.path, as: member, body: attempt.body)
            #expect(answer.status == attempt.status && answer.code == attempt.code && answer.isErrorShape, "\(attempt.label): \(answer)")
        }
        // Within the grant is fine: narrower scopes, a smaller quota, a narrower allowlist.
        let narrowed = try await PortalAPI.call(gateway, .PATCH, "/keys/\(keyID)", as: member, body: DriverHTTP.json([
            "scopes": ["orders:write"], "quota": ["limit": 10, "period": "month"], "allowed_cidrs": ["203.0.113.8/29"],
        ]))
        #expect(narrowed.status == 200 && narrowed.json["scopes"] as? [String] == ["orders:write"], "\(narrowed)")
        // max_keys (2): the second key is made, the third is not; a rotation with a grace may go
        // one over.
        let second = try await PortalAPI.call(gateway, .POST, "/keys", as: member, body: "{}")
        #expect(second.status == 201 && second.header("Cache-Control") == "no-store", "an answer carrying a key is kept by nothing: \(second)")
        let third = try await PortalAPI.call(gateway, .POST, "/keys", as: member, body: "{}")
        #expect(third.status == 409 && third.code == "CONFLICT" && third.isErrorShape && (third.error?["message"] as? String ?? "").contains("max_keys"), "\(third)")
        let rotated = try await PortalAPI.call(gateway, .POST, "/keys/\(keyID)/rotate", as: member, body: #"{"grace": "1h"}"#)
        #expect(rotated.status == 200 && rotated.header("Cache-Control") == "no-store", "\(rotated)")
        let keys = try await DriverAPI.admin(gateway, .GET, "/v1/partners/\(partner)/keys")
        #expect((keys.json["items"] as? [[String: Any]])?.count == 3, "two live keys and the rotated one in its grace: \(keys)")
        // One over max_keys, a rotation keeps no old key for a grace (rotations would add keys
        // without end); with none it replaces a leaked key as ever.
        let successor = try #require(rotated.json["key_id"] as? String)
        let graced = try await PortalAPI.call(gateway, .POST, "/keys/\(successor)/rotate", as: member, body: #"{"grace": "36500d"}"#)
        #expect(graced.status == 409 && graced.code == "CONFLICT" && graced.isErrorShape && (graced.error?["message"] as? String ?? "").contains("grace 0"), "\(graced)")
        let replaced = try await PortalAPI.call(gateway, .POST, "/keys/\(successor)/rotate", as: member, body: #"{"grace": "0"}"#)
        #expect(replaced.status == 200, "\(replaced)")

        // Every refusal is audited in the refusals trail, with the member as actor and why.
        let refusals = try await DriverAPI.admin(gateway, .GET, "/v1/audit?trail=refusals&limit=100")
        let entries = (refusals.json["items"] as? [[String: Any]] ?? []).filter { $0["actor_id"] as? String == member.memberID }
        #expect(entries.count == attempts.count + 2, "\(refusals)")
        #expect(entries.allSatisfy { $0["action"] as? String == "access.refused" && $0["actor"] as? String == "dev@acme.example" })
        let notes = entries.compactMap { $0["note"] as? String }
        for reason in ["admin:all", "payouts:send", "quota 5000/day", "203.0.0.0/16", "198.51.100.1/32", "max_keys"] {
            #expect(notes.contains { $0.contains(reason) }, "no note names \(reason): \(notes)")
        }
        // ...and in the partner's own audit, which its members read.
        let own = try await PortalAPI.call(gateway, .GET, "/audit?limit=100", as: member)
        let actions = (own.json["items"] as? [[String: Any]] ?? []).compactMap { $0["action"] as? String }
        #expect(actions.filter { $0 == "access.refused" }.count == attempts.count + 2, "\(own)")
        #expect(actions.contains("key.create") && actions.contains("key.update") && actions.contains("key.rotate") && actions.contains("member.sign_in"))
    }
}
