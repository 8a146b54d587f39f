import Foundation
import GatewayContract
import GatewayEdge
import Hummingbird
import KeyRegistry

/// Partner API keys: create and list under a partner; show, find, rotate and revoke by key.
///
/// Rotate and revoke also drop the old key from this instance's cache before answering: its
/// pub/sub invalidation reaches this instance a moment later, and once the call returns the
/// old key must never succeed again.
struct KeysController {
    let registry: KeyRegistry
    let verifier: KeyVerifier
    let audit: AdminAudit

    /// The grace period of a rotation when none is given.
    static let defaultGrace = Duration.seconds(24 * 3600)

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("partners/:partner/keys", use: create)
        group.get("partners/:partner/keys", use: list)
        group.post("keys/find", use: find)
        group.get("keys/:key", use: show)
        group.patch("keys/:key", use: update)
        group.post("keys/:key/rotate", use: rotate)
        group.post("keys/:key/revoke", use: revoke)
    }

    @Sendable func create(_ request: Request, context: GatewayRequestContext) async throws -> EditedResponse<CreatedKey> {
        let partnerID = try AdminValidation.id(context.parameters.get("partner") ?? "", prefix: "ptr_")
        let body = try await JSONBody.decode(NewKey.self, from: request, context: context, allowEmpty: true)
        return try await create(partnerID: partnerID, body, by: .admin, request: request, context: context)
    }

    /// Creates a key of the partner, audited as `key.create`; the admin API's and the portal's.
    func create(
        partnerID: String, _ body: NewKey, by source: ChangeSource, request: Request, context: GatewayRequestContext
    ) async throws -> EditedResponse<CreatedKey> {
        let now = Date()
        let (key, record) = try await registry.createKey(
            id: try AdminValidation.chosenID(body.keyID, prefix: "key_", field: "key_id"),
            partnerID: partnerID,
            scopes: try AdminValidation.scopes(body.scopes),
            expiresIn: nil,
            expiresAt: try AdminValidation.expiry(in: body.expiresIn, at: body.expiresAt, now: now),
            name: try body.name.map { try AdminValidation.name($0) },
            meta: try AdminValidation.meta(body.meta),
            allowedNetworks: try AdminValidation.allowedCIDRs(body.allowedCIDRs) ?? NetworkAllowlist(),
            quota: try AdminValidation.quota(body.quota, removes: false) ?? nil,
            by: source,
            now: now
        )
        let created = CreatedKey(
            keyID: record.id, partnerID: record.partnerID, key: key.text, start: record.start, name: record.name,
            meta: record.meta, scopes: record.scopes, createdAt: record.createdAt, expiresAt: record.expiresAt
        )
        return EditedResponse(status: .created, response: try await audit.record(
            "key.create", target: record.id, request: request, context: context, answering: created
        ))
    }

    @Sendable func list(_ request: Request, context: GatewayRequestContext) async throws -> Page<KeyInfo> {
        try await list(partnerID: try AdminValidation.id(context.parameters.get("partner") ?? "", prefix: "ptr_"), request: request)
    }

    /// The partner's keys, oldest first, a page at a time; the admin API's and the portal's.
    func list(partnerID: String, request: Request) async throws -> Page<KeyInfo> {
        let page = try AdminValidation.page(request, defaultLimit: PageRequest.defaultLimit)
        let now = Date()
        let all = try await registry.keys(partnerID: partnerID).map { KeyInfo($0, now: now) }
        guard let slice = Page.slice(all, page, cursor: \.keyID) else {
            throw KeyRegistryError(.unknownCursor, "no key \(page.after ?? "") to continue after")
        }
        return slice
    }

    @Sendable func show(_ request: Request, context: GatewayRequestContext) async throws -> KeyInfo {
        let keyID = try AdminValidation.id(context.parameters.get("key") ?? "", prefix: "key_")
        guard let record = try await registry.key(id: keyID) else { throw GatewayError.notFound(what: "key") }
        return KeyInfo(record, now: Date())
    }

    /// Changes a key's allowlist, quota, name, metadata or scopes; like a revocation, the
    /// change is dropped from this instance's cache before answering and reaches the others
    /// over pub/sub.
    @Sendable func update(_ request: Request, context: GatewayRequestContext) async throws -> KeyInfo {
        let keyID = try AdminValidation.id(context.parameters.get("key") ?? "", prefix: "key_")
        let body = try await JSONBody.decode(KeyUpdate.self, from: request, context: context)
        return try await update(keyID: keyID, body, by: .admin, request: request, context: context)
    }

    /// Changes a key, audited as `key.update`; the admin API's and the portal's.
    func update(keyID: String, _ body: KeyUpdate, by source: ChangeSource, request: Request, context: GatewayRequestContext) async throws -> KeyInfo {
        guard !body.isEmpty else { throw GatewayError.invalidRequest("nothing to change: give allowed_cidrs, quota, name, meta or scopes") }
        let record = try await registry.updateKey(
            id: keyID,
            name: try body.name.map { try AdminValidation.name($0) },
            meta: try body.meta.map { try AdminValidation.meta($0) },
            allowedNetworks: try AdminValidation.allowedCIDRs(body.allowedCIDRs),
            quota: try AdminValidation.quota(body.quota, removes: body.removesQuota),
            scopes: try AdminValidation.scopes(body.scopes),
            by: source,
            revision: try AdminValidation.expectedRevision(request)
        )
        verifier.invalidate(keyHash: record.hash)
        try await audit.record("key.update", target: record.id, request: request, context: context)
        return KeyInfo(record, now: Date())
    }

    /// Which key a presented key is (a leaked key pasted in a ticket): looked up by its hash,
    /// like every verification. The key arrives in the body, so it reaches no access log, and
    /// the lookup changes nothing, so it writes no audit entry.
    @Sendable func find(_ request: Request, context: GatewayRequestContext) async throws -> KeyInfo {
        let body = try await JSONBody.decode(KeyLookup.self, from: request, context: context)
        guard let key = APIKey(body.key.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw GatewayError.invalidRequest("key is not a gateway API key (pgk_live_ with a valid checksum)")
        }
        guard let record = try await registry.key(hash: key.hash) else { throw GatewayError.notFound(what: "key") }
        return KeyInfo(record, now: Date())
    }

    @Sendable func rotate(_ request: Request, context: GatewayRequestContext) async throws -> RotatedKey {
        let keyID = try AdminValidation.id(context.parameters.get("key") ?? "", prefix: "key_")
        return try await rotate(keyID: keyID, request: request, context: context)
    }

    /// Rotates a key, audited as `key.rotate`; the admin API's and the portal's. Without a grace
    /// never refused for a partner's limits: a leaked key must always be replaceable.
    func rotate(keyID: String, by source: ChangeSource = .admin, request: Request, context: GatewayRequestContext) async throws -> RotatedKey {
        let body = try await JSONBody.decode(KeyRotation.self, from: request, context: context, allowEmpty: true)
        let grace = try AdminValidation.duration(body.grace, field: "grace") ?? Self.defaultGrace
        let (key, record, previous) = try await registry.rotateKey(
            id: keyID, grace: grace, revision: try AdminValidation.expectedRevision(request), by: source
        )
        verifier.invalidate(keyHash: previous.hash)
        let rotated = RotatedKey(keyID: record.id, key: key.text, start: record.start, previousKeyID: previous.id, previousKeyExpiresAt: previous.expiresAt)
        return try await audit.record("key.rotate", target: keyID, request: request, context: context, answering: rotated)
    }

    /// Revoking a key that is already revoked is `409 CONFLICT` and writes no audit entry.
    @Sendable func revoke(_ request: Request, context: GatewayRequestContext) async throws -> RevokedKey {
        let keyID = try AdminValidation.id(context.parameters.get("key") ?? "", prefix: "key_")
        return try await revoke(keyID: keyID, request: request, context: context)
    }

    /// Revokes a key, audited as `key.revoke`; the admin API's and the portal's.
    func revoke(keyID: String, request: Request, context: GatewayRequestContext) async throws -> RevokedKey {
        let record = try await registry.revokeKey(id: keyID, revision: try AdminValidation.expectedRevision(request))
        verifier.invalidate(keyHash: record.hash)
        try await audit.record("key.revoke", target: keyID, request: request, context: context)
        return RevokedKey(keyID: record.id)
    }
}
