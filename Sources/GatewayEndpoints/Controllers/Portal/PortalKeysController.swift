import GatewayContract
import GatewayEdge
import Hummingbird
import KeyRegistry

/// `/portal/v1/keys`: the signed-in member's partner's keys, through the admin API's own key
/// operations (``KeysController``) with the member as the audit trail's actor, bound by what
/// the operator granted the partner (`ChangeSource.member`).
///
/// A key of another partner is `404`, as one that does not exist. A member's attempt to widen
/// the grant (a scope the partner lacks, a quota above its, an allowlist wider than its, a key
/// past `max_keys`, a rotation's grace past one over it) is refused in the admin API's shape
/// and recorded in the refusals trail, with the member as actor and the reason as note.
struct PortalKeysController {
    let keys: KeysController
    let registry: KeyRegistry
    let audit: AdminAudit

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("keys") { request, _ in
            try await keys.list(partnerID: try PortalCaller.required().partner.id, request: request)
        }
        group.post("keys") { request, context in
            let body = try await JSONBody.decode(NewKey.self, from: request, context: context, allowEmpty: true)
            // Labels are the operator's: a member's key has none.
            let asked = NewKey(scopes: body.scopes, expiresIn: body.expiresIn, name: body.name)
            return try await auditingRefusals(request, context) {
                try await keys.create(partnerID: try PortalCaller.required().partner.id, asked, by: .member, request: request, context: context)
            }
        }
        group.patch("keys/:key") { request, context in
            let keyID = try await ownKey(context)
            let body = try await JSONBody.decode(KeyUpdate.self, from: request, context: context)
            let asked = KeyUpdate(allowedCIDRs: body.allowedCIDRs, quota: body.quota, removesQuota: body.removesQuota, name: body.name, scopes: body.scopes)
            return try await auditingRefusals(request, context) {
                try await keys.update(keyID: keyID, asked, by: .member, request: request, context: context)
            }
        }
        group.post("keys/:key/rotate") { request, context in
            let keyID = try await ownKey(context)
            return try await auditingRefusals(request, context) {
                try await keys.rotate(keyID: keyID, by: .member, request: request, context: context)
            }
        }
        group.post("keys/:key/revoke") { request, context in
            try await keys.revoke(keyID: try await ownKey(context), request: request, context: context)
        }
    }

    /// The id in the path, when it names a key of the caller's partner; `404` for any other.
    func ownKey(_ context: GatewayRequestContext) async throws -> String {
        try await Self.ownKey(context.parameters.get("key") ?? "", registry: registry)
    }

    static func ownKey(_ text: String, registry: KeyRegistry) async throws -> String {
        let keyID = try AdminValidation.id(text, prefix: "key_")
        guard let record = try await registry.key(id: keyID), record.partnerID == (try PortalCaller.required().partner.id) else {
            throw GatewayError.notFound(what: "key")
        }
        return keyID
    }

    /// Runs a member's change; one the grant refuses is recorded as `access.refused` (even
    /// when that entry cannot be written, the change stays refused).
    private func auditingRefusals<T>(_ request: Request, _ context: GatewayRequestContext, _ change: () async throws -> T) async throws -> T {
        do {
            return try await change()
        } catch let error as KeyRegistryError where [.scopesNotHeld, .beyondGrant, .keyLimitReached].contains(error.code) {
            try? await audit.record(
                AuditLog.refusedAction, target: "\(request.method.rawValue) \(request.uri.path.prefix(256))", request: request, context: context,
                note: error.message
            )
            throw error
        }
    }
}
