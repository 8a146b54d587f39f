import Foundation
import JWTKit

/// The claims of an `X-Gateway-Assertion` (docs/public-api.md): who the gateway says the caller is,
/// for which route, signed so an upstream need not trust the plain `X-Gateway-*` headers.
///
/// Coded by hand so the wire format is pinned here: integer NumericDates, a single-string
/// `aud`, and `partner_id` only when known.
struct AssertionClaims: JWTPayload, Hashable {
    /// `sub`: the user id, or for `api_key` routes (no user) the partner id.
    let subject: String
    /// `channel`: `otp`, `partner_sdk` or `api_key`.
    let channel: String
    /// `partner_id`, when the caller is or came through a partner.
    let partnerID: String?
    /// `aud`: the route's name, so an assertion for one upstream is refused by another.
    let audience: String
    /// `iss`: `tokens.issuer`.
    let issuer: String
    /// `iat` and `exp`, whole seconds since 1970.
    let issuedAt: Int64
    let expiresAt: Int64

    enum CodingKeys: String, CodingKey {
        case subject = "sub"
        case channel
        case partnerID = "partner_id"
        case audience = "aud"
        case issuer = "iss"
        case issuedAt = "iat"
        case expiresAt = "exp"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(subject, forKey: .subject)
        try container.encode(channel, forKey: .channel)
        try container.encodeIfPresent(partnerID, forKey: .partnerID)
        try container.encode(audience, forKey: .audience)
        try container.encode(issuer, forKey: .issuer)
        try container.encode(issuedAt, forKey: .issuedAt)
        try container.encode(expiresAt, forKey: .expiresAt)
    }

    /// The gateway only signs assertions, it never accepts one; upstreams verify them.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
