import AsyncHTTPClient
import Foundation
@testable import GatewayEndpoints
import HTTPTypes
import KeyRegistry
import NIOHTTP1
@testable import PartnerGateway
import Testing
import TestSupport

/// Personal admin credentials and roles against real gateway processes: every route of the
/// role table for every role, the credential as the audit trail's actor, and a revocation
/// seen by a second instance.
@Suite("Admin API: personal credentials and roles", .realProcesses)
struct AdminRoleTests {
    /// An admin call; `listener` `.authz` makes it on the authorization listener (the verify API).
    static func call(
        _ gateway: GatewayProcess, _ token: String, _ method: HTTPMethod, _ path: String, body: String? = nil, actor: String? = nil,
        listener: AdminRoute.Listener = .admin
    ) async throws -> DriverResponse {
        var headers = [("Authorization", "Bearer \(token)")]
        if let actor { headers.append(("X-Admin-Actor", actor)) }
        return try await DriverHTTP.call((listener == .authz ? gateway.authzURL : gateway.adminURL) + path, method: method, headers: headers, body: body)
    }

    /// A credential made with the break-glass token; its token and id.
    static func credential(_ gateway: GatewayProcess, name: String, role: String) async throws -> (token: String, id: String) {
        let created = try await DriverAPI.admin(gateway, .POST, "/v1/admins", body: DriverHTTP.json(["name": name, "role": role, "expires_in": "1d"]))
        try #require(created.status == 201, "\(created)")
        #expect(Set(created.json.keys) == ["admin_id", "name", "role", "token", "expires_at"])
        return (try #require(created.string("token")), try #require(created.string("admin_id")))
    }

    static func auditEntries(_ gateway: GatewayProcess, trail: String = "actions") async throws -> [[String: Any]] {
        let answer = try await DriverAPI.admin(gateway, .GET, "/v1/audit?limit=1000&trail=\(trail)")
        try #require(answer.status == 200, "\(answer)")
        return try #require(answer.json["items"] as? [[String: Any]])
    }

    /// Generated from ``AdminRoute/all`` and ``AdminRole``: a route added without a row is
    /// unreachable, and a row whose permission a role lacks is refused with 403 and audited;
    /// each row is called on its own listener (the verify API's is the authorization listener).
    @Test func everyRouteForEveryRoleMatchesTheTable() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis), authz: true)
        let partnerID = try await DriverAPI.createPartner(gateway, name: "NammaYatri")
        let keyResponse = try await DriverAPI.admin(gateway, .POST, "/v1/partners/\(partnerID)/keys")
        let keyID = try #require(keyResponse.string("key_id"))
        let login = try await DriverAPI.login(gateway, phone: "9876543210")
        let sessionID = try #require(login.sessionID)
        let target = try await Self.credential(gateway, name: "target", role: "auditor")
        let memberID = try await PortalAPI.invite(gateway, partnerID: partnerID, email: "member@acme.example", role: "viewer")
        var tokens: [AdminRole: String] = [:]
        for role in AdminRole.allCases {
            tokens[role] = try await Self.credential(gateway, name: "as-\(role.rawValue)", role: role.rawValue).token
        }

        var refusals = 0
        for role in AdminRole.allCases {
            for route in AdminRoute.all {
                let path = "/v1/" + route.path
                    .replacingOccurrences(of: ":partner", with: partnerID).replacingOccurrences(of: ":key", with: keyID)
                    .replacingOccurrences(of: ":user", with: login.userID).replacingOccurrences(of: ":session", with: sessionID)
                    .replacingOccurrences(of: ":admin", with: target.id).replacingOccurrences(of: ":member", with: memberID)
                let method = HTTPMethod(rawValue: route.method.rawValue)
                let answer = try await Self.call(gateway, try #require(tokens[role]), method, path, body: method == .GET ? nil : "{}", listener: route.listener)
                if role.allows(route.permission) {
                    #expect(answer.status != 403 && answer.status != 401, "\(role) \(route): \(answer)")
                    let message = answer.error?["message"] as? String ?? ""
                    #expect(!message.contains("no route"), "\(route) is in the table but not routed: \(answer)")
                } else {
                    refusals += 1
                    #expect(answer.status == 403 && answer.code == "FORBIDDEN" && answer.isErrorShape, "\(role) \(route): \(answer)")
                }
            }
        }
        // Every refusal is in the refusals trail, naming the credential, and none among the actions.
        #expect(try await Self.auditEntries(gateway).allSatisfy { $0["action"] as? String != "access.refused" })
        let refused = try await Self.auditEntries(gateway, trail: "refusals").filter { $0["action"] as? String == "access.refused" }
        #expect(refused.count == refusals)
        #expect(refused.allSatisfy { ($0["actor"] as? String)?.hasPrefix("as-") == true && ($0["actor_id"] as? String)?.hasPrefix("adm_") == true })
        // A path with no row is 404 for everyone, the owner included.
        #expect(try await Self.call(gateway, try #require(tokens[.owner]), .GET, "/v1/nowhere").status == 404)
    }

    @Test func theActorIsTheCredentialAndARevocationReachesTheOtherInstance() async throws {
        let redis = try await RedisServer()
        let yaml = DriverYAML.make(redis: redis)
        let first = try await GatewayProcess(yaml: yaml)
        let second = try await GatewayProcess(yaml: yaml)
        let support = try await Self.credential(first, name: "asha", role: "support")
        let login = try await DriverAPI.login(first, phone: "9876543210")
        let sessionID = try #require(login.sessionID)

        let revoked = try await Self.call(second, support.token, .POST, "/v1/users/\(login.userID)/sessions/\(sessionID)/revoke", actor: "someone-else")
        #expect(revoked.status == 200, "\(revoked)")
        let entry = try #require(try await Self.auditEntries(first).first { $0["action"] as? String == "session.revoke" })
        #expect(entry["actor"] as? String == "asha")
        #expect(entry["actor_id"] as? String == support.id)
        #expect(entry["note"] as? String == "someone-else")
        // Support may not create partners, whatever it declares.
        #expect(try await Self.call(first, support.token, .POST, "/v1/partners", body: #"{"name": "x"}"#, actor: "root").status == 403)

        // Both instances accept it; once one revokes it, the other refuses it at once
        // (credentials are read from Redis on every request, so "within 1 s" is "next request").
        #expect(try await Self.call(second, support.token, .POST, "/v1/users/find", body: #"{"phone": "9876543210"}"#).status == 200)
        #expect(try await DriverAPI.admin(first, .POST, "/v1/admins/\(support.id)/revoke").status == 200)
        let refused = try await Self.call(second, support.token, .POST, "/v1/users/find", body: #"{"phone": "9876543210"}"#)
        #expect(refused.status == 401 && refused.code == "UNAUTHORIZED", "\(refused)")
        #expect(try await DriverAPI.admin(first, .POST, "/v1/admins/\(support.id)/revoke").code == "CONFLICT")

        // Rotation: the new token works on both instances, the old one on neither.
        let operator_ = try await Self.credential(first, name: "ravi", role: "operator")
        let rotated = try await DriverAPI.admin(second, .POST, "/v1/admins/\(operator_.id)/rotate", body: #"{"expires_in": "30d"}"#)
        #expect(rotated.status == 200, "\(rotated)")
        let newToken = try #require(rotated.string("token"))
        #expect(try await Self.call(first, newToken, .GET, "/v1/partners").status == 200)
        #expect(try await Self.call(first, operator_.token, .GET, "/v1/partners").status == 401)
        let listed = try await DriverAPI.admin(second, .GET, "/v1/admins")
        let statuses = (listed.json["items"] as? [[String: Any]] ?? []).map { "\($0["name"] ?? ""):\($0["status"] ?? "")" }
        #expect(statuses == ["asha:revoked", "ravi:active"], "\(listed)")
        #expect(!listed.text.contains(newToken) && !listed.text.contains(support.token))
    }

    @Test func badCredentialRequestsGetClearErrors() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis))
        for body in [#"{"name": "x", "role": "superuser"}"#, #"{"name": "", "role": "owner"}"#, #"{"name": "x", "role": "owner", "expires_in": "soon"}"#, #"{"role": "owner"}"#] {
            let answer = try await DriverAPI.admin(gateway, .POST, "/v1/admins", body: body)
            #expect(answer.status == 400 && answer.code == "INVALID_REQUEST" && answer.isErrorShape, "\(body): \(answer)")
        }
        for path in ["/v1/admins/adm_0000000000000000/revoke", "/v1/admins/nope/rotate"] {
            #expect(try await DriverAPI.admin(gateway, .POST, path).code == "NOT_FOUND")
        }
        // A well-formed credential that was never issued is just a wrong token.
        let forged = "pga_live_" + String(repeating: "A", count: 43) + "_000000"
        #expect(try await Self.call(gateway, forged, .GET, "/v1/partners").status == 401)
    }
}
