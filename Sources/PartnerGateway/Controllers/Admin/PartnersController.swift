import Hummingbird
import KeyRegistry

/// `/v1/partners`: create, list, show, disable and enable partners (docs/ADMIN_API.md).
struct PartnersController {
    let registry: KeyRegistry
    let audit: AdminAudit

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("partners", use: create)
        group.get("partners", use: list)
        group.get("partners/:partner", use: show)
        group.post("partners/:partner/disable") { request, context in try await setStatus(.disabled, request, context) }
        group.post("partners/:partner/enable") { request, context in try await setStatus(.active, request, context) }
    }

    @Sendable func create(_ request: Request, context: GatewayRequestContext) async throws -> EditedResponse<PartnerBody> {
        let body = try await JSONBody.decode(CreatePartnerRequest.self, from: request, context: context)
        let name = try AdminValidation.name(body.name)
        if let rate = body.rate, !(rate > 0 && rate <= 1_000_000) { throw GatewayError.invalidRequest("rate must be between 0 and 1000000 requests per second") }
        if let burst = body.burst, !(1...10_000_000).contains(burst) { throw GatewayError.invalidRequest("burst must be between 1 and 10000000") }
        let partner = try await registry.createPartner(name: name, scopes: try AdminValidation.scopes(body.scopes), rate: body.rate, burst: body.burst)
        await audit.record("partner.create", target: partner.id, request: request, context: context)
        return EditedResponse(status: .created, response: PartnerBody(partner))
    }

    @Sendable func list(_ request: Request, context: GatewayRequestContext) async throws -> ListBody<PartnerBody> {
        ListBody(items: try await registry.partners().map(PartnerBody.init))
    }

    @Sendable func show(_ request: Request, context: GatewayRequestContext) async throws -> PartnerBody {
        let id = try AdminValidation.id(context.parameters.get("partner") ?? "", prefix: "ptr_")
        guard let partner = try await registry.partner(id) else { throw GatewayError.notFound(what: "partner") }
        return PartnerBody(partner)
    }

    func setStatus(_ status: Partner.Status, _ request: Request, _ context: GatewayRequestContext) async throws -> PartnerBody {
        let id = try AdminValidation.id(context.parameters.get("partner") ?? "", prefix: "ptr_")
        let partner = try await registry.setPartnerStatus(id, status)
        await audit.record(status == .disabled ? "partner.disable" : "partner.enable", target: id, request: request, context: context)
        return PartnerBody(partner)
    }
}
