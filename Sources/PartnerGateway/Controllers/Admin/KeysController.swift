import Foundation
import Hummingbird
import KeyRegistry

/// Partner API keys: create and list under a partner, rotate and revoke by key id.
struct KeysController {
    let registry: KeyRegistry
    let audit: AdminAudit

    /// The grace period of a rotation when none is given (SPEC §3).
    static let defaultGrace = Duration.seconds(24 * 3600)

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("partners/:partner/keys", use: create)
        group.get("partners/:partner/keys", use: list)
        group.post("keys/:key/rotate", use: rotate)
        group.post("keys/:key/revoke", use: revoke)
    }

    @Sendable func create(_ request: Request, context: GatewayRequestContext) async throws -> EditedResponse<CreatedKeyBody> {
        let partnerID = try AdminValidation.id(context.parameters.get("partner") ?? "", prefix: "ptr_")
        let body = try await JSONBody.decode(CreateKeyRequest.self, from: request, context: context, allowEmpty: true)
        let expiresIn = try AdminValidation.duration(body.expiresIn, field: "expires_in")
        if let expiresIn, expiresIn <= .zero { throw GatewayError.invalidRequest("expires_in must be greater than 0") }
        let (key, record) = try await registry.createKey(partnerID: partnerID, scopes: try AdminValidation.scopes(body.scopes), expiresIn: expiresIn)
        await audit.record("key.create", target: record.id, request: request, context: context)
        return EditedResponse(status: .created, response: CreatedKeyBody(
            keyID: record.id, partnerID: record.partnerID, key: key.text, scopes: record.scopes,
            createdAt: record.createdAt, expiresAt: record.expiresAt
        ))
    }

    @Sendable func list(_ request: Request, context: GatewayRequestContext) async throws -> ListBody<KeyBody> {
        let partnerID = try AdminValidation.id(context.parameters.get("partner") ?? "", prefix: "ptr_")
        let now = Date()
        return ListBody(items: try await registry.keys(partnerID: partnerID).map { KeyBody($0, now: now) })
    }

    @Sendable func rotate(_ request: Request, context: GatewayRequestContext) async throws -> RotatedKeyBody {
        let keyID = try AdminValidation.id(context.parameters.get("key") ?? "", prefix: "key_")
        let body = try await JSONBody.decode(RotateKeyRequest.self, from: request, context: context, allowEmpty: true)
        let grace = try AdminValidation.duration(body.grace, field: "grace") ?? Self.defaultGrace
        let (key, record, previous) = try await registry.rotateKey(id: keyID, grace: grace)
        await audit.record("key.rotate", target: keyID, request: request, context: context)
        return RotatedKeyBody(keyID: record.id, key: key.text, previousKeyID: previous.id, previousKeyExpiresAt: previous.expiresAt)
    }

    @Sendable func revoke(_ request: Request, context: GatewayRequestContext) async throws -> RevokedKeyBody {
        let keyID = try AdminValidation.id(context.parameters.get("key") ?? "", prefix: "key_")
        let record = try await registry.revokeKey(id: keyID)
        await audit.record("key.revoke", target: keyID, request: request, context: context)
        return RevokedKeyBody(keyID: record.id, status: KeyRecord.Status.revoked.rawValue)
    }
}
