import GatewayContract
import GatewayEdge
import Hummingbird
import KeyRegistry

/// `/v1/partners`: create, list, show, update, disable and enable partners
/// (docs/admin-api.md).
///
/// Update and disable also drop the partner from this instance's key cache before answering;
/// the pub/sub message does the same on every other instance a moment later.
struct PartnersController {
    let registry: KeyRegistry
    let verifier: KeyVerifier
    let sessions: MemberSessions
    let audit: AdminAudit

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("partners", use: create)
        group.get("partners", use: list)
        group.get("partners/:partner", use: show)
        group.patch("partners/:partner", use: update)
        group.post("partners/:partner/disable") { request, context in try await setStatus(.disabled, request, context) }
        group.post("partners/:partner/enable") { request, context in try await setStatus(.active, request, context) }
    }

    @Sendable func create(_ request: Request, context: GatewayRequestContext) async throws -> EditedResponse<PartnerInfo> {
        let body = try await JSONBody.decode(NewPartner.self, from: request, context: context)
        let partner = try await registry.createPartner(
            id: try AdminValidation.chosenID(body.partnerID, prefix: "ptr_", field: "partner_id"),
            name: try AdminValidation.name(body.name),
            scopes: try AdminValidation.scopes(body.scopes),
            rate: try AdminValidation.rate(body.rate),
            burst: try AdminValidation.burst(body.burst),
            allowedNetworks: try AdminValidation.allowedCIDRs(body.allowedCIDRs) ?? NetworkAllowlist(),
            quota: try AdminValidation.quota(body.quota, removes: false) ?? nil,
            status: try AdminValidation.partnerStatus(body.status) ?? .active,
            maxKeys: try AdminValidation.maxKeys(body.maxKeys)
        )
        try await audit.record("partner.create", target: partner.id, request: request, context: context)
        return EditedResponse(status: .created, response: PartnerInfo(partner))
    }

    @Sendable func list(_ request: Request, context: GatewayRequestContext) async throws -> Page<PartnerInfo> {
        let page = try AdminValidation.page(request, defaultLimit: PageRequest.defaultLimit)
        let (partners, more) = try await registry.partners(after: page.after, limit: page.limit)
        return Page(items: partners.map(PartnerInfo.init), nextCursor: more ? partners.last?.id : nil)
    }

    @Sendable func show(_ request: Request, context: GatewayRequestContext) async throws -> PartnerInfo {
        let id = try AdminValidation.id(context.parameters.get("partner") ?? "", prefix: "ptr_")
        guard let partner = try await registry.partner(id) else { throw GatewayError.notFound(what: "partner") }
        return PartnerInfo(partner)
    }

    /// Changes every field given in one step, only if the partner is still at the revision
    /// of `If-Match` when there is one.
    @Sendable func update(_ request: Request, context: GatewayRequestContext) async throws -> PartnerInfo {
        let id = try AdminValidation.id(context.parameters.get("partner") ?? "", prefix: "ptr_")
        let body = try await JSONBody.decode(PartnerUpdate.self, from: request, context: context)
        guard !body.isEmpty else {
            throw GatewayError.invalidRequest("nothing to change: give name, rate, burst, scopes, allowed_cidrs, quota, status or max_keys")
        }
        let partner = try await registry.updatePartner(
            id,
            name: try body.name.map { try AdminValidation.name($0) },
            scopes: try AdminValidation.scopes(body.scopes),
            rate: try AdminValidation.rate(body.rate),
            burst: try AdminValidation.burst(body.burst),
            allowedNetworks: try AdminValidation.allowedCIDRs(body.allowedCIDRs),
            quota: try AdminValidation.quota(body.quota, removes: body.removesQuota),
            status: try AdminValidation.partnerStatus(body.status),
            maxKeys: try AdminValidation.maxKeys(body.maxKeys),
            revision: try AdminValidation.expectedRevision(request)
        )
        verifier.invalidate(partnerID: id)
        try await audit.record("partner.update", target: id, request: request, context: context)
        if body.status != nil, partner.status == .disabled { try? await sessions.endAll(partnerID: id) }
        return PartnerInfo(partner)
    }

    /// Disabling (here or by a PATCH's `status`) also ends every portal session of the
    /// partner's members.
    func setStatus(_ status: Partner.Status, _ request: Request, _ context: GatewayRequestContext) async throws -> PartnerInfo {
        let id = try AdminValidation.id(context.parameters.get("partner") ?? "", prefix: "ptr_")
        let partner = try await registry.setPartnerStatus(id, status, revision: try AdminValidation.expectedRevision(request))
        verifier.invalidate(partnerID: id)
        try await audit.record(status == .disabled ? "partner.disable" : "partner.enable", target: id, request: request, context: context)
        // After the entry: the portal refuses a disabled partner's sessions whatever happens
        // here, so a failure only leaves them to their own end, should the partner come back.
        if status == .disabled { try? await sessions.endAll(partnerID: id) }
        return PartnerInfo(partner)
    }
}
