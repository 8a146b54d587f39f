import Foundation
import JWTKit

/// The claims of an `X-Gateway-Assertion` (docs/public-api.md): who the gateway says the caller is,
/// for which route, signed so an upstream need not trust the plain `X-Gateway-*` headers.
///
/// Coded by hand so the wire format is pinned here: integer NumericDates, a single-string
/// `aud`, and `partner_id` only when known.
package struct AssertionClaims: JWTPayload, Hashable {
    /// `sub`: the user id, or for `api_key` routes (no user) the partner id.
    package let subject: String
    /// `channel`: `otp`, `partner_sdk` or `api_key`.
    package let channel: String
    /// `partner_id`, when the caller is or came through a partner.
    package let partnerID: String?
    /// `aud`: the route's name, so an assertion for one upstream is refused by another.
    package let audience: String
    /// `iss`: `tokens.issuer`.
    package let issuer: String
    /// `iat` and `exp`, whole seconds since 1970.
    package let issuedAt: Int64
    package let expiresAt: Int64

    package enum CodingKeys: String, CodingKey {
        case subject = "sub"
        case channel
        case partnerID = "partner_id"
        case audience = "aud"
        case issuer = "iss"
        case issuedAt = "iat"
        case expiresAt = "exp"
    }

    package func encode(to encoder: any Encoder) throws {
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
    package func verify(using algorithm: some JWTAlgorithm) async throws {}
}
