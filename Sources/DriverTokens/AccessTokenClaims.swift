import Foundation
import JWTKit

/// The claims of a driver's access token (docs/public-api.md).
///
/// Coding is written by hand rather than synthesised so that the wire format is pinned
/// down here: integer NumericDates (other JWT libraries reject or mis-read fractional
/// ones), `partner_id` only for the SDK channel, and decoding that refuses anything this
/// gateway would never have issued.
public struct AccessTokenClaims: JWTPayload, Hashable {
    /// The driver (`user_id`), the same in both channels for one phone.
    public let userID: String
    /// The login session (`sid`): the refresh-token family id, so one session can be
    /// logged out without the others.
    public let sessionID: String
    /// How the driver logged in (`channel`, and `partner_id` for the SDK channel).
    public let channel: AccessTokenChannel
    /// A random id unique to this token (`jti`): logs and traces name a token by it. A token
    /// is revoked with its session (`sid`), never alone.
    public let tokenID: String
    /// Who issued the token (`iss`).
    public let issuer: String
    /// `iat`, whole seconds.
    public let issuedAt: Date
    /// `exp`, whole seconds.
    public let expiresAt: Date
    /// `nbf`, when present: the gateway never sets it, but a token that carries one is not
    /// accepted before it (RFC 7519 §4.1.5).
    public let notBefore: Date?

    public init(
        userID: String,
        sessionID: String,
        channel: AccessTokenChannel,
        tokenID: String,
        issuer: String,
        issuedAt: Date,
        expiresAt: Date,
        notBefore: Date? = nil
    ) {
        self.userID = userID
        self.sessionID = sessionID
        self.channel = channel
        self.tokenID = tokenID
        self.issuer = issuer
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.notBefore = notBefore
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case expiresAt = "exp"
        case issuedAt = "iat"
        case notBefore = "nbf"
        case tokenID = "jti"
        case issuer = "iss"
        case sessionID = "sid"
        case channel = "channel"
        case partnerID = "partner_id"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        userID = try Self.nonEmptyString(.userID, in: container)
        sessionID = try Self.nonEmptyString(.sessionID, in: container)
        tokenID = try Self.nonEmptyString(.tokenID, in: container)
        issuer = try Self.nonEmptyString(.issuer, in: container)
        issuedAt = try Self.numericDate(.issuedAt, in: container)
        expiresAt = try Self.numericDate(.expiresAt, in: container)
        notBefore = container.contains(.notBefore) ? try Self.numericDate(.notBefore, in: container) : nil
        let partnerID = try container.decodeIfPresent(String.self, forKey: .partnerID)
        switch (try container.decode(String.self, forKey: .channel), partnerID) {
        case ("otp", nil):
            channel = .otp
        case ("partner_sdk", let partnerID?) where !partnerID.isEmpty:
            channel = .partnerSDK(partnerID: partnerID)
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .channel, in: container,
                debugDescription: "channel must be otp without partner_id or partner_sdk with one")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(userID, forKey: .userID)
        try container.encode(Self.seconds(expiresAt), forKey: .expiresAt)
        try container.encode(Self.seconds(issuedAt), forKey: .issuedAt)
        try container.encodeIfPresent(notBefore.map(Self.seconds), forKey: .notBefore)
        try container.encode(tokenID, forKey: .tokenID)
        try container.encode(issuer, forKey: .issuer)
        try container.encode(sessionID, forKey: .sessionID)
        try container.encode(channel.name, forKey: .channel)
        try container.encodeIfPresent(channel.partnerID, forKey: .partnerID)
    }

    /// Called by jwt-kit after the signature checked out.
    ///
    /// This is a safety net, not the real check: jwt-kit gives it neither the issuer nor a
    /// clock, so it only refuses what is wrong under any configuration (a non-HS256 key,
    /// a token expired beyond the largest leeway ever allowed). ``AccessTokenVerifier``
    /// then applies its own issuer, leeway and clock.
    public func verify(using algorithm: some JWTAlgorithm) async throws {
        guard algorithm.name == AccessTokenVerifier.algorithm else {
            throw AccessTokenError.unsupportedAlgorithm
        }
        guard isUnexpired(at: Date(), leeway: AccessTokenVerifier.maximumLeeway) else {
            throw AccessTokenError.expired
        }
        guard hasStarted(at: Date(), leeway: AccessTokenVerifier.maximumLeeway) else {
            throw AccessTokenError.notYetValid
        }
    }

    /// Whether the token may still be used at `now`, allowing `leeway` seconds of clock skew.
    func isUnexpired(at now: Date, leeway: TimeInterval) -> Bool {
        now < expiresAt.addingTimeInterval(leeway)
    }

    /// Whether the token's life has begun at `now`: neither `iat` nor `nbf` lies further in
    /// the future than `leeway`, the same clock skew ``isUnexpired(at:leeway:)`` allows.
    /// A token issued "later" was minted by a clock that is wrong or by someone who holds
    /// the key and wants it to outlive a revocation made before its `iat`.
    func hasStarted(at now: Date, leeway: TimeInterval) -> Bool {
        let latest = now.addingTimeInterval(leeway)
        return issuedAt <= latest && (notBefore.map { $0 <= latest } ?? true)
    }

    static func seconds(_ date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down))
    }

    private static func nonEmptyString(
        _ key: CodingKeys, in container: KeyedDecodingContainer<CodingKeys>
    ) throws -> String {
        let value = try container.decode(String.self, forKey: key)
        guard !value.isEmpty else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "empty")
        }
        return value
    }

    /// Reads a NumericDate independently of the decoder's date strategy, refusing values a
    /// `Date` cannot hold meaningfully (NaN, infinities, beyond year ~292 billion).
    private static func numericDate(
        _ key: CodingKeys, in container: KeyedDecodingContainer<CodingKeys>
    ) throws -> Date {
        let seconds = try container.decode(Double.self, forKey: key)
        guard seconds.isFinite, abs(seconds) < 1e15 else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not a NumericDate")
        }
        return Date(timeIntervalSince1970: seconds)
    }
}
