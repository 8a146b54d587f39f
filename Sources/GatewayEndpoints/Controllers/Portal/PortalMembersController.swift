import GatewayContract
import GatewayEdge
import HTTPTypes
import Hummingbird
import KeyRegistry

/// `/portal/v1/members` (`partner_admin`): the caller's partner's members, through the admin
/// API's own operations (``MembersController``). A member of another partner is `404`. Nobody
/// changes their own role or removes themselves here (`409`): a partner cannot lock its last
/// `partner_admin` out by a slip; another one, or the operator, can.
struct PortalMembersController {
    let members: MembersController

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("members") { request, _ in
            try await members.list(partnerID: try PortalCaller.required().partner.id, request: request)
        }
        group.post("members") { request, context in
            let body = try await JSONBody.decode(NewMember.self, from: request, context: context)
            // Ids are the gateway's, or the operator's state files': a member's invitation gets one issued.
            let asked = NewMember(email: body.email, name: body.name, role: body.role)
            return try await members.create(partnerID: try PortalCaller.required().partner.id, asked, request: request, context: context)
        }
        group.patch("members/:member") { request, context in
            let member = try await target(context)
            let body = try await JSONBody.decode(MemberUpdate.self, from: request, context: context)
            if member.id == (try PortalCaller.required().member.id), let role = body.role, role != member.role.rawValue { throw Self.ownRole }
            return try await members.update(member, body, request: request, context: context)
        }
        group.delete("members/:member") { request, context in
            let member = try await target(context)
            guard member.id != (try PortalCaller.required().member.id) else { throw Self.ownRemoval }
            return try await members.remove(member, request: request, context: context)
        }
    }

    private func target(_ context: GatewayRequestContext) async throws -> Member {
        try await members.member(context.parameters.get("member") ?? "", of: try PortalCaller.required().partner.id)
    }

    static let ownRole = GatewayError(.conflict, "CONFLICT", "you cannot change your own role: ask another partner_admin or the operator")
    static let ownRemoval = GatewayError(.conflict, "CONFLICT", "you cannot remove yourself: ask another partner_admin or the operator")
}
