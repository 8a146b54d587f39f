import Crypto
import GatewayConfiguration
import GatewayEdge
import HTTPTypes
import Hummingbird

/// Requires `Authorization: Bearer <GATEWAY_ADMIN_TOKEN>` on the admin listener.
///
/// The presented token and the real one are both hashed with SHA-256 and the digests compared
/// (swift-crypto compares digests in constant time), so neither the length nor the content of
/// the real token leaks through timing. `GET /metrics` and `GET /healthz` stay open for
/// scrapers and probes, as Envoy's and Kong's admin/status listeners do: the admin listener
/// binds to loopback by default and metrics hold no secrets.
struct AdminAuthMiddleware<Context: RequestContext>: RouterMiddleware {
    private let expected: SHA256Digest
    static var openPaths: Set<String> { ["/metrics", "/healthz"] }

    init(token: Secret) {
        self.expected = SHA256.hash(data: token.bytes)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.method == .get, Self.openPaths.contains(request.uri.path) {
            return try await next(request, context)
        }
        guard let presented = BearerToken.from(request.headers) else {
            throw GatewayError.unauthorizedAdmin
        }
        guard SHA256.hash(data: Array(presented.utf8)) == expected else {
            throw GatewayError.unauthorizedAdmin
        }
        return try await next(request, context)
    }
}
