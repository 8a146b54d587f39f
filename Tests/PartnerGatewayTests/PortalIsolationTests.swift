import Foundation
@testable import GatewayEndpoints
import KeyRegistry
import NIOHTTP1
import Testing
import TestSupport

/// The portal keeps every partner to its own (docs/portal.md, "Roles"), against real processes:
/// generated from ``PortalRoute/all`` and ``MemberRole``, every route that acts on a partner is
/// called by every role of partner A against partner B's keys, usage, members and audit; every
/// call is refused and Redis is byte for byte what it was. Then each role against its own
/// partner: a viewer changes nothing, a developer does not manage members.
@Suite("Portal: one partner never reaches another's, each role only its own", .realProcesses)
struct PortalIsolationTests {
    /// What A's members try: B's ids in the path, in `key_id`, or as `partner_id` in the query
    /// or body of a route that takes none, with bodies that would change something if taken.
    static func attempts(_ route: PortalRoute, other: (partner: String, key: String, member: String, cursor: String)) -> [(path: String, body: String?)] {
        let path = route.path.replacingOccurrences(of: ":key", with: other.key).replacingOccurrences(of: ":member", with: other.member)
        let writes: String
        switch route.path {
        case "keys": writes = DriverHTTP.json(["partner_id": other.partner, "name": "taken", "scopes": ["sdk_tokens:mint"]])
        case "keys/:key": writes = DriverHTTP.json(["name": "taken", "allowed_cidrs": ["0.0.0.0/0"], "quota": NSNull()])
        case "keys/:key/rotate": writes = DriverHTTP.json(["grace": "0"])
        case "members": writes = DriverHTTP.json(["partner_id": other.partner, "email": "spy@a.example", "name": "Spy", "role": "partner_admin"])
        case "members/:member": writes = DriverHTTP.json(["role": "viewer"])
        default: writes = DriverHTTP.json(["partner_id": other.partner])
        }
        let named = "partner_id=\(other.partner)"
        switch (route.method, route.path) {
        case (.get, "usage"):
            return [("/usage?from=2026-01-01&to=2026-12-31&key_id=\(other.key)", nil), ("/usage?from=2026-01-01&to=2026-12-31&\(named)", nil)]
        case (.get, "audit"):
            return [("/audit?\(named)", nil), ("/audit?after=\(other.cursor)", nil)]
        case (.get, _):
            return [("/\(path)?\(named)", nil)]
        default:
            return route.path.contains(":") ? [("/\(path)", writes), ("/\(path)?\(named)", writes)] : [("/\(path)", writes)]
        }
    }

    @Test func everyRouteOfEveryRoleOfAIsRefusedBsResources() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: PortalAPI.yaml(redis: redis, upstream: upstream))

        // B: a member, a key with a call on it (usage), entries of its own in the audit trail.
        let partnerB = try await DriverAPI.createPartner(gateway, name: "B")
        let ownerB = try await PortalAPI.member(gateway, partnerID: partnerB, email: "owner@b.example", role: "partner_admin")
        let createdB = try await PortalAPI.call(gateway, .POST, "/keys", as: ownerB, body: DriverHTTP.json(["name": "b-backend"]))
        try #require(createdB.status == 201, "\(createdB)")
        let keyB = try #require(createdB.string("key_id"))
        let called = try await DriverHTTP.call(gateway.baseURL + "/api/x", headers: [("X-API-Key", try #require(createdB.string("key")))])
        #expect(called.status == 200, "\(called)")
        let auditB = try await PortalAPI.call(gateway, .GET, "/audit?limit=1", as: ownerB)
        let cursorB = try #require((auditB.json["items"] as? [[String: Any]])?.first?["id"] as? String)
        try await eventually(timeout: .seconds(10)) {
            let usage = try await DriverAPI.admin(gateway, .GET, "/v1/keys/\(keyB)/usage?from=2026-01-01&to=2026-12-31")
            let days = usage.json["days"] as? [[String: Any]] ?? []
            return days.contains { ($0["allowed"] as? Int ?? 0) > 0 }
        }

        // A: one member of every role, signed in.
        let partnerA = try await DriverAPI.createPartner(gateway, name: "A")
        var membersA: [MemberRole: PortalMember] = [:]
        for role in MemberRole.allCases {
            membersA[role] = try await PortalAPI.member(gateway, partnerID: partnerA, email: "\(role.rawValue)@a.example", role: role.rawValue)
        }
        // Wait for the key's last use to be written, and take the picture.
        try await eventually(timeout: .seconds(10)) {
            (try await DriverAPI.admin(gateway, .GET, "/v1/keys/\(keyB)")).json["last_used_at"] is String
        }
        try await RedisSnapshot.awaitFullBuckets(redis)
        let before = try await RedisSnapshot.take(redis)
        #expect(before.count > 20, "the snapshot holds the stores' keys: \(before.keys.sorted())")

        var calls = 0
        let other = (partner: partnerB, key: keyB, member: ownerB.memberID, cursor: "actions:" + cursorB)
        for role in MemberRole.allCases {
            let member = try #require(membersA[role])
            // The sign-in steps act on no partner (they take an email, not a session); the
            // session tests cover them.
            for route in PortalRoute.all where route.access != .open {
                for attempt in Self.attempts(route, other: other) {
                    let method = HTTPMethod(rawValue: route.method.rawValue)
                    let answer = try await PortalAPI.call(gateway, method, attempt.path, as: member, body: attempt.body)
                    calls += 1
                    #expect([400, 403, 404].contains(answer.status) && answer.isErrorShape, "\(role) \(method) \(attempt.path): \(answer)")
                    for secret in [keyB, ownerB.memberID, "owner@b.example", "b-backend"] {
                        #expect(!answer.text.contains(secret), "\(role) \(method) \(attempt.path) answered something of B's: \(answer)")
                    }
                }
            }
        }
        #expect(calls >= MemberRole.allCases.count * 14)
        let after = try await RedisSnapshot.take(redis)
        #expect(after == before, "changed: \(Set(after.keys).symmetricDifference(before.keys).sorted() + before.keys.filter { after[$0] != nil && after[$0] != before[$0] }.sorted())")
        // And B's member still works, untouched.
        let keys = try await PortalAPI.call(gateway, .GET, "/keys", as: ownerB)
        #expect(keys.status == 200 && keys.text.contains(keyB) && !keys.text.contains("taken"))
    }

    @Test func aViewerChangesNothingAndADeveloperManagesNoMembers() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: PortalAPI.yaml(redis: redis))
        let partner = try await DriverAPI.createPartner(gateway, name: "A")
        let admin = try await PortalAPI.member(gateway, partnerID: partner, email: "admin@a.example", role: "partner_admin")
        let key = try #require(try await PortalAPI.call(gateway, .POST, "/keys", as: admin, body: "{}").string("key_id"))
        let viewer = try await PortalAPI.member(gateway, partnerID: partner, email: "viewer@a.example", role: "viewer")
        let developer = try await PortalAPI.member(gateway, partnerID: partner, email: "dev@a.example", role: "developer")
        try await RedisSnapshot.awaitFullBuckets(redis)
        let before = try await RedisSnapshot.take(redis)

        var refused: [String] = []
        for (member, role) in [(viewer, MemberRole.viewer), (developer, .developer)] {
            for route in PortalRoute.all where route.access != .open && !route.allows(role) {
                let path = "/" + route.path.replacingOccurrences(of: ":key", with: key).replacingOccurrences(of: ":member", with: admin.memberID)
                let method = HTTPMethod(rawValue: route.method.rawValue)
                let answer = try await PortalAPI.call(gateway, method, path, as: member, body: method == .GET ? nil : DriverHTTP.json(["role": "viewer", "name": "x"]))
                #expect(answer.status == 403 && answer.code == "FORBIDDEN" && answer.isErrorShape, "\(role) \(method) \(path): \(answer)")
                refused.append("\(role.rawValue) \(route)")
            }
        }
        // A viewer: every write of keys and members; a developer: every route of members.
        #expect(refused.filter { $0.hasPrefix("viewer") }.count == 8, "\(refused)")
        #expect(refused.filter { $0.hasPrefix("developer") }.count == 4 && refused.filter { $0.hasPrefix("developer") }.allSatisfy { $0.contains("members") }, "\(refused)")
        #expect(try await RedisSnapshot.take(redis) == before)
        // What each may read, it reads.
        for path in ["/me", "/keys", "/usage?from=2026-01-01&to=2026-01-02", "/audit"] {
            #expect(try await PortalAPI.call(gateway, .GET, path, as: viewer).status == 200, "\(path)")
        }
        #expect(try await PortalAPI.call(gateway, .POST, "/keys", as: developer, body: "{}").status == 201)
    }
}
