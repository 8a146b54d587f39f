import GatewayContract
import GatewayEdge
import HTTPTypes
import Hummingbird
import KeyRegistry

/// `/v1/partners/{partner_id}/members`: the people of a partner who sign in to the portal
/// (docs/admin-api.md, "Members"). The portal's own `/portal/v1/members` runs the same
/// operations on the signed-in member's partner.
struct MembersController {
    let members: MemberRegistry
    let audit: AdminAudit

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("partners/:partner/members") { request, context in
            let body = try await JSONBody.decode(NewMember.self, from: request, context: context)
            return try await create(partnerID: try Self.partnerID(context), body, request: request, context: context)
        }
        group.get("partners/:partner/members") { request, context in
            try await list(partnerID: try Self.partnerID(context), request: request)
        }
        group.patch("partners/:partner/members/:member") { request, context in
            let member = try await member(context.parameters.get("member") ?? "", of: try Self.partnerID(context))
            let body = try await JSONBody.decode(MemberUpdate.self, from: request, context: context)
            return try await update(member, body, request: request, context: context)
        }
        group.delete("partners/:partner/members/:member") { request, context in
            try await remove(try await member(context.parameters.get("member") ?? "", of: try Self.partnerID(context)), request: request, context: context)
        }
    }

    /// Invites a person, audited as `member.create`.
    func create(partnerID: String, _ body: NewMember, request: Request, context: GatewayRequestContext) async throws -> EditedResponse<MemberInfo> {
        let member = try await members.create(
            id: try AdminValidation.chosenID(body.memberID, prefix: "mbr_", field: "member_id"),
            partnerID: partnerID, email: try AdminValidation.email(body.email), name: try AdminValidation.name(body.name),
            role: try AdminValidation.memberRole(body.role), createdBy: AuditActor.current?.id ?? "unknown"
        )
        try await audit.record("member.create", target: member.id, request: request, context: context)
        return EditedResponse(status: .created, response: MemberInfo(member))
    }

    /// The partner's members, oldest first, a page at a time. A read: no audit entry.
    func list(partnerID: String, request: Request) async throws -> Page<MemberInfo> {
        let page = try AdminValidation.page(request, defaultLimit: PageRequest.defaultLimit)
        let (found, more) = try await members.members(partnerID: partnerID, after: page.after, limit: page.limit)
        return Page(items: found.map(MemberInfo.init), nextCursor: more ? found.last?.id : nil)
    }

    /// Changes a member's name or role, audited as `member.update`: their open sessions act in
    /// the new role from their next call. With `If-Match`, only at that revision.
    func update(_ member: Member, _ body: MemberUpdate, request: Request, context: GatewayRequestContext) async throws -> MemberInfo {
        guard !body.isEmpty else { throw GatewayError.invalidRequest("nothing to change: give name or role") }
        let updated = try await members.update(
            id: member.id, name: try body.name.map { try AdminValidation.name($0) }, role: try body.role.map(AdminValidation.memberRole),
            revision: try AdminValidation.expectedRevision(request)
        )
        try await audit.record("member.update", target: member.id, request: request, context: context)
        return MemberInfo(updated)
    }

    /// Removes a member, audited as `member.remove`: every session of theirs ends on every
    /// instance at once. With `If-Match`, only at that revision.
    func remove(_ member: Member, request: Request, context: GatewayRequestContext) async throws -> Response {
        try await members.remove(id: member.id, revision: try AdminValidation.expectedRevision(request))
        try await audit.record("member.remove", target: member.id, request: request, context: context)
        return Response(status: .noContent)
    }

    /// The partner's member `text` names: any other id, well-formed or not, is `404`.
    func member(_ text: String, of partnerID: String) async throws -> Member {
        guard Member.isID(text), let member = try await members.member(id: text), member.partnerID == partnerID else {
            throw GatewayError.notFound(what: "member")
        }
        return member
    }

    private static func partnerID(_ context: GatewayRequestContext) throws -> String {
        try AdminValidation.id(context.parameters.get("partner") ?? "", prefix: "ptr_")
    }
}
