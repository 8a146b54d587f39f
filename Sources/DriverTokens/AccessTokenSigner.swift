import Foundation
import GatewayPrimitives
import JWTKit

/// Issues HS256 access tokens with the first of the configured keys.
///
/// It takes the same ordered key list as ``AccessTokenVerifier`` so that one configuration
/// drives both: rotating a secret means putting the new key first and keeping the old one
/// after it until the old tokens have expired.
public struct AccessTokenSigner: Sendable {
    /// The `kid` of the key that signs (the first configured one).
    public let keyID: String
    /// The `iss` claim of every token.
    public let issuer: String
    /// Seconds from `iat` to `exp` (`tokens.access_ttl`).
    public let timeToLive: TimeInterval

    private let keys: JWTKeyCollection

    /// - Parameters:
    ///   - keys: ordered keys; only the first is used here.
    ///   - issuer: the `iss` claim, the same string the verifier expects.
    ///   - timeToLive: lifetime in seconds, at least 1 (default 24 h).
    public init(
        keys: [AccessTokenSigningKey],
        issuer: String,
        timeToLive: TimeInterval = 86_400
    ) async throws(DriverTokensError) {
        try AccessTokenSigningKey.validate(keys)
        guard !issuer.isEmpty else { throw DriverTokensError("issuer must not be empty") }
        guard timeToLive.isFinite, timeToLive >= 1 else {
            throw DriverTokensError("access token lifetime must be at least one second")
        }
        let key = keys[0]
        let collection = JWTKeyCollection()
        await collection.add(
            hmac: HMACKey(from: key.secret), digestAlgorithm: .sha256, kid: JWKIdentifier(string: key.kid),
            serializer: DefaultJWTSerializer(jsonEncoder: AccessTokenJSONEncoder()))
        // No default key: every signature must name its kid explicitly.
        await collection.clearDefault()
        self.keys = collection
        self.keyID = key.kid
        self.issuer = issuer
        self.timeToLive = timeToLive.rounded(.down)
    }

    /// Signs a new access token for one login session.
    ///
    /// - Parameters:
    ///   - sessionID: the login's refresh-token family id (``RefreshToken/familyID``).
    ///     It must have that shape: the payload of a JWT is readable by anyone holding it,
    ///     so this guards against a caller passing the refresh token itself by mistake.
    ///   - now: the issue time; tests pass their own clock.
    public func sign(
        userID: String,
        sessionID: String,
        channel: AccessTokenChannel,
        now: Date = Date()
    ) async throws(DriverTokensError) -> IssuedAccessToken {
        guard !userID.isEmpty else { throw DriverTokensError("user id must not be empty") }
        guard RefreshToken.isValidFamilyID(sessionID) else {
            throw DriverTokensError("session id must be a refresh-token family id")
        }
        if case .partnerSDK(let partnerID) = channel, partnerID.isEmpty {
            throw DriverTokensError("partner id must not be empty")
        }
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let claims = AccessTokenClaims(
            userID: userID,
            sessionID: sessionID,
            channel: channel,
            tokenID: RandomHex.string(byteCount: 16),
            issuer: issuer,
            issuedAt: issuedAt,
            expiresAt: issuedAt.addingTimeInterval(timeToLive))
        do {
            let token = try await keys.sign(claims, kid: JWKIdentifier(string: keyID))
            return IssuedAccessToken(token: token, claims: claims)
        } catch {
            throw DriverTokensError("signing failed: \(error)")
        }
    }
}
