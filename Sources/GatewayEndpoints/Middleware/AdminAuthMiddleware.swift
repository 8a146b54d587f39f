import Crypto
import Foundation
import GatewayConfiguration
import GatewayEdge
import HTTPTypes
import Hummingbird
import KeyRegistry

/// Authenticates every admin request and enforces the role table: the one place that decides
/// who may call what on the admin listener.
///
/// 1. `Authorization: Bearer` must be a personal credential (`pga_live_...`) that is active
///    and unexpired in Redis, or the break-glass `GATEWAY_ADMIN_TOKEN` (role `owner`, actor
///    `root`) when `admin.break_glass` allows it; else `401 UNAUTHORIZED`.
/// 2. The path and method must be a row of ``AdminRoute/all`` for this listener (else `404`/`405`).
/// 3. The credential's role must hold the row's permission; else `403 FORBIDDEN`, audited as
///    `access.refused`.
///
/// The break-glass token is compared by SHA-256 digests (swift-crypto compares digests in
/// constant time), so neither its length nor its content leaks through timing. On the admin
/// listener credentials are read from Redis on every request, never cached, so a revocation
/// or expiry is refused by every instance at once; on the authorization listener, whose one
/// route a service calls for every key it checks, an active credential is remembered for a
/// second (``RememberedAdminCredentials``). `GET /metrics` and `GET /healthz` stay open for
/// scrapers and probes, as Envoy's and Kong's admin/status listeners do.
struct AdminAuthMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    private let breakGlass: SHA256Digest?
    private let admins: AdminRegistry
    private let audit: AdminAudit
    /// Which rows of the table this listener serves.
    private let listener: AdminRoute.Listener
    private let remembered: RememberedAdminCredentials?
    static var openPaths: Set<String> { ["/metrics", "/healthz"] }

    init(breakGlassToken: Secret?, admins: AdminRegistry, audit: AdminAudit, listener: AdminRoute.Listener = .admin) {
        self.breakGlass = breakGlassToken.map { SHA256.hash(data: $0.bytes) }
        self.admins = admins
        self.audit = audit
        self.listener = listener
        remembered = listener == .authz ? RememberedAdminCredentials() : nil
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.method == .get, Self.openPaths.contains(request.uri.path) {
            return try await next(request, context)
        }
        let identity = try await authenticate(request)
        let actor = AuditActor(id: identity.id, name: identity.name, partnerID: nil)
        return try await AdminIdentity.$current.withValue(identity) {
            try await AuditActor.$current.withValue(actor) { try await authorize(identity, request, context, next) }
        }
    }

    /// The route table and the role, for an authenticated request.
    private func authorize(
        _ identity: AdminIdentity, _ request: Request, _ context: Context, _ next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        // `/metrics` and `/healthz` with another method: the router answers 405.
        if Self.openPaths.contains(request.uri.path) { return try await next(request, context) }
        switch AdminRoute.match(method: request.method, path: request.uri.path, on: listener) {
        case .notFound: throw GatewayError.notFound
        case .methodNotAllowed: throw GatewayError.methodNotAllowed
        case .route(let route):
            guard identity.role.allows(route.permission) else {
                // Refused either way: an entry that cannot be written is logged by the audit.
                try? await audit.record(
                    AuditLog.refusedAction, target: "\(request.method.rawValue) \(request.uri.path.prefix(256))", request: request, context: context
                )
                throw GatewayError(
                    .forbidden, "FORBIDDEN",
                    "role \(identity.role.rawValue) does not have \(route.permission.rawValue), which \(route) needs"
                )
            }
            return try await next(request, context)
        }
    }

    private func authenticate(_ request: Request) async throws -> AdminIdentity {
        guard let presented = BearerToken.from(request.headers) else { throw GatewayError.unauthorizedAdmin }
        if let secret = AdminSecret(String(presented)) {
            let hash = secret.hash
            if let record = remembered?.record(hash: hash) {
                return AdminIdentity(id: record.id, name: record.name, role: record.role)
            }
            guard let record = try await admins.record(for: secret), record.status(at: Date()) == .active else {
                throw GatewayError.unauthorizedAdmin
            }
            remembered?.remember(record, hash: hash)
            return AdminIdentity(id: record.id, name: record.name, role: record.role)
        }
        guard let breakGlass, SHA256.hash(data: Array(presented.utf8)) == breakGlass else {
            throw GatewayError.unauthorizedAdmin
        }
        return .root
    }
}
