import GatewayAdmission
import HTTPTypes
import Hummingbird

/// `GET /.well-known/jwks.json`: the keys upstreams verify `X-Gateway-Assertion` with.
///
/// Cacheable for a few minutes: a new key is published before it signs only if operators
/// add it second first (rotation), so clients refetch on an unknown `kid` anyway.
struct JWKSController<Context: RequestContext> {
    let jwks: AssertionJWKS

    func addRoutes(to router: Router<Context>) {
        let jwks = self.jwks
        router.get("/.well-known/jwks.json") { request, context -> Response in
            var response = try jwks.response(from: request, context: context)
            response.headers[.cacheControl] = "public, max-age=300"
            return response
        }
    }
}

extension AssertionJWKS: ResponseEncodable {}
