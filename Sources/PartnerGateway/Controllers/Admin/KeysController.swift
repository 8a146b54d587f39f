import Foundation
import Hummingbird
import KeyRegistry

/// Partner API keys: create and list under a partner, rotate and revoke by key id.
///
/// Rotate and revoke also drop the old key from this instance's cache before answering:
/// its pub/sub invalidation reaches this instance a moment later, and SPEC §3 says that once
/// the call returns the old key never succeeds again.
struct KeysController {
    let registry: KeyRegistry
    let verifier: KeyVerifier
    let audit: AdminAudit

    /// The grace period of a rotation when none is given (SPEC §3).
    static let defaultGrace = Duration.seconds(24 * 3600)
    /// The longest `expires_in` and `grace` accepted: 100 years. Longer ones would put dates
    /// past year 9999 into the answers, which RFC 3339 cannot write.
    static let longest = Duration.seconds(36_500 * 86_400)

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
        if let expiresIn, expiresIn > Self.longest { throw GatewayError.invalidRequest("expires_in must be at most 36500d") }
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
        if grace > Self.longest { throw GatewayError.invalidRequest("grace must be at most 36500d") }
        let (key, record, previous) = try await registry.rotateKey(id: keyID, grace: grace)
        verifier.invalidate(keyHash: previous.hash)
        await audit.record("key.rotate", target: keyID, request: request, context: context)
        return RotatedKeyBody(keyID: record.id, key: key.text, previousKeyID: previous.id, previousKeyExpiresAt: previous.expiresAt)
    }

    @Sendable func revoke(_ request: Request, context: GatewayRequestContext) async throws -> RevokedKeyBody {
        let keyID = try AdminValidation.id(context.parameters.get("key") ?? "", prefix: "key_")
        let record = try await registry.revokeKey(id: keyID)
        verifier.invalidate(keyHash: record.hash)
        await audit.record("key.revoke", target: keyID, request: request, context: context)
        return RevokedKeyBody(keyID: record.id, status: KeyRecord.Status.revoked.rawValue)
    }
}
