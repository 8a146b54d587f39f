import Foundation
import GatewayContract
import GatewayEdge
import Hummingbird
import KeyRegistry

/// `/v1/admins`: personal admin credentials (docs/admin-api.md, "Admins"). Create and rotate
/// answer with the token, once; revoke ends it on every instance at once (credentials are read
/// from Redis on every request, never cached).
struct AdminsController {
    let admins: AdminRegistry
    let audit: AdminAudit

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("admins", use: create)
        group.get("admins", use: list)
        group.get("admins/:admin", use: show)
        group.post("admins/:admin/rotate", use: rotate)
        group.post("admins/:admin/revoke", use: revoke)
    }

    @Sendable func create(_ request: Request, context: GatewayRequestContext) async throws -> EditedResponse<CreatedAdmin> {
        let body = try await JSONBody.decode(NewAdmin.self, from: request, context: context)
        let name = try AdminValidation.name(body.name)
        let role = try Self.role(body.role)
        let now = Date()
        let expiresAt = try AdminValidation.expiry(in: body.expiresIn, at: body.expiresAt, now: now)
        let creator = AdminIdentity.current?.id ?? "unknown"
        let (secret, record) = try await admins.create(
            id: try AdminValidation.chosenID(body.adminID, prefix: "adm_", field: "admin_id"),
            name: name, role: role, expiresIn: nil, expiresAt: expiresAt, createdBy: creator, now: now
        )
        let created = CreatedAdmin(adminID: record.id, name: record.name, role: record.role.rawValue, token: secret.text, expiresAt: record.expiresAt)
        return EditedResponse(status: .created, response: try await audit.record(
            "admin.create", target: record.id, request: request, context: context, answering: created
        ))
    }

    @Sendable func list(_ request: Request, context: GatewayRequestContext) async throws -> Page<AdminInfo> {
        let page = try AdminValidation.page(request, defaultLimit: PageRequest.defaultLimit)
        let (records, more) = try await admins.list(after: page.after, limit: page.limit)
        let now = Date()
        return Page(items: records.map { AdminInfo($0, now: now) }, nextCursor: more ? records.last?.id : nil)
    }

    @Sendable func show(_ request: Request, context: GatewayRequestContext) async throws -> AdminInfo {
        let id = try AdminValidation.id(context.parameters.get("admin") ?? "", prefix: "adm_")
        guard let record = try await admins.record(id: id) else { throw GatewayError.notFound(what: "admin") }
        return AdminInfo(record, now: Date())
    }

    /// A new token for the same person and role; the old one stops working in the same step.
    @Sendable func rotate(_ request: Request, context: GatewayRequestContext) async throws -> CreatedAdmin {
        let id = try AdminValidation.id(context.parameters.get("admin") ?? "", prefix: "adm_")
        let body = try await JSONBody.decode(AdminRotation.self, from: request, context: context, allowEmpty: true)
        let (secret, record) = try await admins.rotate(
            id: id, expiresIn: try Self.lifetime(body.expiresIn), revision: try AdminValidation.expectedRevision(request)
        )
        let rotated = CreatedAdmin(adminID: record.id, name: record.name, role: record.role.rawValue, token: secret.text, expiresAt: record.expiresAt)
        return try await audit.record("admin.rotate", target: id, request: request, context: context, answering: rotated)
    }

    @Sendable func revoke(_ request: Request, context: GatewayRequestContext) async throws -> RevokedAdmin {
        let id = try AdminValidation.id(context.parameters.get("admin") ?? "", prefix: "adm_")
        let record = try await admins.revoke(id: id, revision: try AdminValidation.expectedRevision(request))
        try await audit.record("admin.revoke", target: id, request: request, context: context)
        return RevokedAdmin(adminID: record.id)
    }

    static func role(_ text: String) throws -> AdminRole {
        guard let role = AdminRole(rawValue: text) else {
            throw GatewayError.invalidRequest("role must be one of: \(AdminRole.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return role
    }

    static func lifetime(_ text: String?) throws -> Duration? {
        let lifetime = try AdminValidation.duration(text, field: "expires_in")
        if let lifetime, lifetime <= .zero { throw GatewayError.invalidRequest("expires_in must be greater than 0") }
        return lifetime
    }
}

extension AdminInfo {
    /// The record as of `now`: an active credential past its expiry shows as expired.
    init(_ record: AdminRecord, now: Date) {
        self.init(
            adminID: record.id, name: record.name, role: record.role.rawValue, status: record.status(at: now).rawValue,
            start: record.start, createdAt: record.createdAt, expiresAt: record.expiresAt, createdBy: record.createdBy,
            revision: record.revision
        )
    }
}
