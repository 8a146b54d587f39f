/// A freshly signed access token and the claims inside it.
///
/// The claims come back alongside the string so the server can answer with
/// `access_token_expires_at` and remember `jti`/`sid` without decoding what it just made.
public struct IssuedAccessToken: Sendable, CustomStringConvertible {
    /// The compact JWS to hand to the client. Never log it.
    public let token: String
    public let claims: AccessTokenClaims

    /// Leaves the token out: it is a bearer credential.
    public var description: String {
        "IssuedAccessToken(jti: \(claims.tokenID), sid: \(claims.sessionID), exp: \(claims.expiresAt))"
    }
}

extension IssuedAccessToken: CustomReflectable {
    /// Keeps `dump` and debuggers from showing the token.
    public var customMirror: Mirror { Mirror(self, children: ["claims": claims]) }
}
