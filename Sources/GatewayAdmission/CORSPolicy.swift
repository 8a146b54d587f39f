import GatewayConfiguration
import GatewayPrimitives
import NIOHTTP1

/// CORS for the origins of `web.allowed_origins` (docs/public-api.md, "Web apps"), one rule
/// for the gateway's `/auth/*` endpoints and for proxied routes.
///
/// A preflight is answered by the gateway itself, before authentication (browsers send no
/// credentials with it) and without reaching an upstream. Every other response to an allowed
/// origin carries the origin back with credentials allowed; any other origin gets no
/// `Access-Control-Allow-*` at all, so its pages can read nothing. The upstream's own
/// `Access-Control-*` fields never pass where the gateway owns CORS: two sets would
/// contradict each other, and browsers refuse a doubled `Access-Control-Allow-Origin`.
package struct CORSPolicy: Sendable {
    package let allowedOrigins: Set<String>

    package init(_ web: GatewayConfig.Web) {
        allowedOrigins = Set(web.allowedOrigins)
    }

    /// No allowed origins: the gateway sends no CORS fields and answers no preflight.
    package var isEnabled: Bool { !allowedOrigins.isEmpty }

    package func allows(_ origin: String?) -> Bool {
        guard let origin else { return false }
        return allowedOrigins.contains(origin)
    }

    /// `OPTIONS` with `Origin` and `Access-Control-Request-Method`: a browser asking, not a
    /// request to pass on. `has` says whether the request holds a field (its lowercase name):
    /// the caller reads its own head, bytes or fields.
    package static func isPreflight(method: HTTPMethod, has: (StaticString) -> Bool) -> Bool {
        method == .OPTIONS && has("origin") && has("access-control-request-method")
    }

    /// The fields of the `204` answering a preflight from `origin`: only `Vary` for an origin
    /// not in the list.
    package func preflightFields(origin: String?) -> [(name: String, value: String)] {
        guard allows(origin), let origin else { return [("Vary", "Origin")] }
        return [
            ("Access-Control-Allow-Origin", origin),
            ("Access-Control-Allow-Credentials", "true"),
            ("Access-Control-Allow-Methods", Self.allowedMethods),
            ("Access-Control-Allow-Headers", Self.allowedHeaders),
            ("Access-Control-Max-Age", String(Self.maxAgeSeconds)),
            ("Vary", "Origin"),
        ]
    }

    /// The fields added to a real response to `origin` (the request's `Origin`, if any).
    package func responseFields(origin: String?) -> [(name: String, value: String)] {
        guard allows(origin), let origin else { return [("Vary", "Origin")] }
        return [
            ("Access-Control-Allow-Origin", origin),
            ("Access-Control-Allow-Credentials", "true"),
            ("Access-Control-Expose-Headers", Self.exposedHeaders),
            ("Vary", "Origin"),
        ]
    }

    /// A field the gateway replaces on routes whose CORS it owns.
    package static func isCORSField(_ name: UnsafeRawBufferPointer) -> Bool {
        HeaderName.hasPrefix(name, "access-control-")
    }

    package static let allowedMethods = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"
    /// What a web app sends besides the CORS-safelisted fields: the bearer token, JSON, and
    /// the gateway's request and idempotency keys. Never `X-API-Key`: partner keys are not
    /// for browsers.
    package static let allowedHeaders = "Authorization, Content-Type, X-Request-Id, Idempotency-Key"
    package static let exposedHeaders = "RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, X-Request-Id"
    /// How long a browser may keep a preflight's answer: ten minutes (Chromium's cap is two hours).
    package static let maxAgeSeconds = 600
}
