import DriverSessions
import DriverTokens
import GatewayEdge
import GatewayObservability
import GatewayPrimitives
import HTTPTypes

/// Authenticates `Authorization: Bearer <access token>` (docs/public-api.md) for bearer routes and
/// logout, entirely in process: the signature from the verified-token cache (HS256 on a
/// miss), revocation from ``SessionRevocations``. No Redis round trip, so bearer routes keep
/// working while Redis is down (docs/public-api.md) — once the instance has read the revocations from
/// Redis at least once since it started; before that it answers 503 rather than guess.
package struct BearerAuthenticator: Sendable {
    package let verifier: AccessTokenVerifier
    package let revocations: SessionRevocations

    package init(verifier: AccessTokenVerifier, revocations: SessionRevocations) {
        self.verifier = verifier
        self.revocations = revocations
    }

    package static let missing = GatewayError(.unauthorized, "MISSING_TOKEN", "an Authorization: Bearer token is required")
    package static let invalid = GatewayError(.unauthorized, "INVALID_TOKEN", "the access token is invalid or expired")

    /// The claims of an already verified, unrevoked token, answered synchronously; nil when
    /// that cannot be told without more work (no token, not cached yet, revocations not loaded,
    /// or revoked): ``authenticate(_:)`` then decides, with its refusals and metrics.
    ///
    /// `last` is the caller's memo of the previous answer (the proxy engine keeps one per
    /// connection): a keep-alive connection carries one driver's token on every request,
    /// and comparing the header with the last one (in constant time: an edge may carry several
    /// drivers' requests on one connection) is cheaper than hashing it for the shared cache.
    /// Expiry and revocation are checked every time either way.
    package func cachedClaims(authorization: String?, last: inout LastToken?) -> AccessTokenClaims? {
        guard revocations.isLoaded, let authorization else { return nil }
        let claims: AccessTokenClaims
        if let last, ConstantTime.equal(last.authorization, authorization), verifier.isUnexpired(last.claims) {
            claims = last.claims
        } else {
            guard let token = BearerToken.from(authorization: authorization).map(String.init),
                  let cached = verifier.cachedClaims(for: token)
            else { return nil }
            claims = cached
            last = LastToken(authorization: authorization, claims: cached)
        }
        guard !revocations.isRevoked(userID: claims.userID, sessionID: claims.sessionID, issuedAt: claims.issuedAt) else { return nil }
        return claims
    }

    /// An `Authorization` header value and the claims it was last found to carry.
    package struct LastToken {
        package let authorization: String
        package let claims: AccessTokenClaims
    }

    /// The token's claims, or `401 MISSING_TOKEN` (no `Authorization` header) or
    /// `401 INVALID_TOKEN` (anything wrong with it, including another scheme than Bearer).
    package func authenticate(_ headers: HTTPFields) async throws -> AccessTokenClaims {
        try await authenticate(authorization: headers[.authorization])
    }

    /// ``authenticate(_:)`` from the `Authorization` header's value, for the proxy engine,
    /// which reads NIO's headers.
    package func authenticate(authorization: String?) async throws -> AccessTokenClaims {
        guard authorization != nil else { throw Self.missing }
        guard let token = BearerToken.from(authorization: authorization).map(String.init) else { throw Self.invalid }
        let claims: AccessTokenClaims
        let cached = verifier.cachedClaims(for: token)
        CacheMetrics.token.record(hit: cached != nil)
        if let cached {
            claims = cached
        } else {
            do {
                claims = try await verifier.verify(token)
            } catch {
                AuthMetrics.accessTokenRefused(error.code)
                throw Self.invalid
            }
        }
        // A freshly started instance has not read the revocations from Redis yet: until it
        // has, an unrevoked answer means nothing, so wait for that first read (shared by
        // concurrent requests) and fail closed if Redis cannot be reached.
        if !revocations.isLoaded {
            do {
                try await revocations.loadIfNeeded()
            } catch {
                throw GatewayError.serviceUnavailable
            }
        }
        guard !revocations.isRevoked(userID: claims.userID, sessionID: claims.sessionID, issuedAt: claims.issuedAt) else {
            AuthMetrics.accessTokenRefused("revoked")
            throw Self.invalid
        }
        return claims
    }
}
