import Foundation
import Testing
import TestSupport

/// `gatewayctl members` against a real gateway, and what partners' members do in the portal
/// as `gatewayctl audit` shows it: every action with the member as actor, in a chain that
/// `gatewayctl audit verify` passes.
@Suite("gatewayctl: partners' members and their portal actions in the audit trail", .realProcesses)
struct GatewayctlMembersTests {
    static func ctl(_ gateway: GatewayProcess, _ arguments: [String]) async throws -> CtlResult {
        try await Ctl.run(arguments, adminURL: gateway.adminURL, token: GatewayProcess.adminToken)
    }

    @Test func membersCommandsManageAPartnersPeople() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: PortalAPI.yaml(redis: redis))
        let partner = try await DriverAPI.createPartner(gateway, name: "Acme")

        let created = try await Self.ctl(gateway, ["members", "create", "--partner", partner, "--email", "Asha@Acme.example", "--name", "Asha", "--role", "developer", "-o", "json"])
        #expect(created.status == 0, "\(created)")
        let member = try created.object()
        #expect(Set(member.keys) == ["member_id", "partner_id", "email", "name", "role", "revision"])
        #expect(member["email"] as? String == "asha@acme.example" && member["role"] as? String == "developer")
        let memberID = try #require(member["member_id"] as? String)

        let table = try await Self.ctl(gateway, ["members", "list", "--partner", partner])
        #expect(table.status == 0 && table.stdout.hasPrefix("MEMBER ID") && table.stdout.contains("asha@acme.example"), "\(table)")
        let taken = try await Self.ctl(gateway, ["members", "create", "--partner", partner, "--email", "asha@acme.example", "--name", "Again", "--role", "viewer"])
        #expect(taken.status == 1 && taken.stderr.contains("CONFLICT"), "\(taken)")
        let badRole = try await Self.ctl(gateway, ["members", "create", "--partner", partner, "--email", "x@acme.example", "--name", "X", "--role", "owner"])
        #expect(badRole.status == 1 && badRole.stderr.contains("INVALID_REQUEST"), "\(badRole)")

        let signedIn = try await PortalAPI.signIn(gateway, email: "asha@acme.example")
        let updated = try await Self.ctl(gateway, ["members", "update", memberID, "--partner", partner, "--role", "viewer", "-o", "json"])
        #expect(updated.status == 0, "\(updated)")
        #expect(try updated.object()["role"] as? String == "viewer")
        #expect(try await PortalAPI.call(gateway, .POST, "/keys", as: signedIn, body: "{}").status == 403, "the new role applies at once")

        let declined = try await Self.ctl(gateway, ["members", "remove", memberID, "--partner", partner])
        #expect(declined.status == 64, "no --yes without a terminal: \(declined)")
        let dryRun = try await Self.ctl(gateway, ["members", "remove", memberID, "--partner", partner, "--dry-run"])
        #expect(dryRun.status == 0 && dryRun.stdout.contains("dry run"), "\(dryRun)")
        let removed = try await Self.ctl(gateway, ["members", "remove", memberID, "--partner", partner, "--yes"])
        #expect(removed.status == 0 && removed.stdout.contains("removed"), "\(removed)")
        #expect(try await PortalAPI.call(gateway, .GET, "/me", as: signedIn).status == 401, "their session ended")
        let gone = try await Self.ctl(gateway, ["members", "remove", memberID, "--partner", partner, "--yes"])
        #expect(gone.status == 1 && gone.stderr.contains("NOT_FOUND"), "\(gone)")
    }

    @Test func everyPortalActionIsInTheAuditTrailWithTheMemberAsActor() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: PortalAPI.yaml(redis: redis))
        let partner = try await DriverAPI.createPartner(gateway, name: "Acme")
        let invited = try await Self.ctl(gateway, ["members", "create", "--partner", partner, "--email", "asha@acme.example", "--name", "Asha", "--role", "partner_admin", "-o", "json"])
        let memberID = try #require(try invited.object()["member_id"] as? String)

        let asha = try await PortalAPI.signIn(gateway, email: "asha@acme.example")
        let key = try await PortalAPI.call(gateway, .POST, "/keys", as: asha, body: #"{"name": "backend"}"#)
        let keyID = try #require(key.string("key_id"))
        #expect(try await PortalAPI.call(gateway, .PATCH, "/keys/\(keyID)", as: asha, body: #"{"allowed_cidrs": ["127.0.0.1/32"]}"#).status == 200)
        let rotated = try await PortalAPI.call(gateway, .POST, "/keys/\(keyID)/rotate", as: asha, body: #"{"grace": "1h"}"#)
        let newKeyID = try #require(rotated.string("key_id"))
        #expect(try await PortalAPI.call(gateway, .POST, "/keys/\(newKeyID)/revoke", as: asha).status == 200)
        let other = try await PortalAPI.call(gateway, .POST, "/members", as: asha, body: #"{"email": "ravi@acme.example", "name": "Ravi", "role": "viewer"}"#)
        let otherID = try #require(other.string("member_id"))
        #expect(try await PortalAPI.call(gateway, .PATCH, "/members/\(otherID)", as: asha, body: #"{"role": "developer"}"#).status == 200)
        #expect(try await PortalAPI.call(gateway, .DELETE, "/members/\(otherID)", as: asha).status == 204)
        #expect(try await PortalAPI.call(gateway, .PATCH, "/members/\(memberID)", as: asha, body: #"{"role": "viewer"}"#).status == 409, "not one's own role")
        #expect(try await PortalAPI.call(gateway, .DELETE, "/session", as: asha).status == 204)

        let listed = try await Self.ctl(gateway, ["audit", "--limit", "100", "-o", "json"])
        #expect(listed.status == 0, "\(listed)")
        let entries = try #require(try listed.object()["items"] as? [[String: Any]])
        let byMember = entries.filter { $0["actor_id"] as? String == memberID }
        #expect(byMember.allSatisfy { $0["actor"] as? String == "Asha" })
        let actions = byMember.reversed().map { "\($0["action"] ?? "") \($0["target"] ?? "")" }
        #expect(actions == [
            "member.sign_in \(memberID)", "key.create \(keyID)", "key.update \(keyID)", "key.rotate \(keyID)", "key.revoke \(newKeyID)",
            "member.create \(otherID)", "member.update \(otherID)", "member.remove \(otherID)", "member.sign_out \(memberID)",
        ], "\(actions)")
        let table = try await Self.ctl(gateway, ["audit", "--limit", "3"])
        #expect(table.stdout.contains("member.sign_out") && table.stdout.contains(memberID), "\(table)")

        let verified = try await Self.ctl(gateway, ["audit", "verify", "--json"])
        #expect(verified.status == 0, "\(verified)")
        #expect(try verified.object()["status"] as? String == "intact")
        // The operator's own actions are in the same chain, under their credential.
        #expect(entries.contains { $0["action"] as? String == "member.create" && $0["actor"] as? String == "root" && $0["target"] as? String == memberID })
    }
}
