import DriverTokens
import Foundation
import GatewayAdmission
import GatewayConfiguration
import GatewayPrimitives
import NIOHTTP1
import KeyRegistry

/// What an upgraded connection was opened with: enough to tell, when a revocation or a key
/// change is announced, whether it ends this connection (``UpgradedConnections``). Memory
/// only; the presented key is kept to verify it again, never logged.
///
/// Taken at admission and carried to the upstream's `101`, never read again at the `101`: a
/// token that expired or a session revoked in between must not open a socket with a weaker
/// credential than the one admitted.
package struct UpgradedCredential: Sendable {
    package var userID: String?
    package var sessionID: String?
    /// The access token's `iat`.
    package var issuedAt: Date?
    /// When the credential ends by itself: the token's `exp`, or the key's `expires_at` (a
    /// rotated key's is the end of its grace).
    package var expiresAt: Date?
    package var partnerID: String?
    package var keyHash: String?
    package var presentedKey: String?
    package var scope: String?
    /// The client's address as admission resolved it: a narrowed allowlist is checked against it.
    package var clientIP: String?
    /// ``KeyVerifier/invalidations`` when the key was admitted: a key or partner change announced
    /// before the socket was registered is checked at registration.
    package var keyInvalidations: UInt64?

    package init(
        userID: String? = nil, sessionID: String? = nil, issuedAt: Date? = nil, expiresAt: Date? = nil, partnerID: String? = nil,
        keyHash: String? = nil, presentedKey: String? = nil, scope: String? = nil, clientIP: String? = nil,
        keyInvalidations: UInt64? = nil
    ) {
        self.userID = userID
        self.sessionID = sessionID
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.partnerID = partnerID
        self.keyHash = keyHash
        self.presentedKey = presentedKey
        self.scope = scope
        self.clientIP = clientIP
        self.keyInvalidations = keyInvalidations
    }

    /// A driver's access token.
    package init(claims: AccessTokenClaims) {
        self.init(
            userID: claims.userID, sessionID: claims.sessionID, issuedAt: claims.issuedAt, expiresAt: claims.expiresAt,
            partnerID: claims.channel.partnerID
        )
    }

    /// A partner's key, as presented, with its record's expiry.
    package init(presentedKey: String, key: KeyRecord, scope: String, clientIP: String?, keyInvalidations: UInt64?) {
        self.init(
            expiresAt: key.expiresAt, partnerID: key.partnerID, keyHash: APIKey(presentedKey)?.hash, presentedKey: presentedKey,
            scope: scope.isEmpty ? nil : scope, clientIP: clientIP, keyInvalidations: keyInvalidations
        )
    }

    /// The credential of a handshake on `request`'s route, taken as it is admitted: the token's
    /// claims as the verifier's cache holds them (it verified them moments ago), or the key's
    /// record. Nil when memory no longer vouches for it (revoked, expired or changed since the
    /// check): the handshake is refused.
    static func of(_ request: ProxyEngine.Request, engine: ProxyEngine) -> UpgradedCredential? {
        let credentials = request.credentials
        switch request.route.auth {
        case .none:
            return UpgradedCredential()
        case .bearer:
            // A token in its leeway past `exp` still passes a request, but opens no socket that
            // would outlive it.
            var last: BearerAuthenticator.LastToken?
            guard let claims = engine.bearer.cachedClaims(authorization: credentials.authorization, last: &last),
                  claims.expiresAt > Date()
            else { return nil }
            return UpgradedCredential(claims: claims)
        case .apiKey:
            let verifier = engine.apiKeys.verifier
            // Read before the key: an announcement after this is seen at registration.
            let invalidations = verifier.invalidations
            guard let presented = credentials.apiKey,
                  case .valid(let key, let partner)? = verifier.cachedVerification(presented, scope: request.route.scope),
                  NetworkAllowlist.admits(clientIP: request.clientIP, key: key, partner: partner)
            else { return nil }
            return UpgradedCredential(
                presentedKey: presented, key: key, scope: request.route.scope, clientIP: request.clientIP,
                keyInvalidations: invalidations
            )
        }
    }

    /// What a `pg:invalidate` message may end, before the revocation or key is looked at again.
    package func isNamed(by kind: Substring, _ target: Substring) -> Bool {
        switch kind {
        case "session": sessionID.map { $0 == target } ?? false
        case "user": userID.map { $0 == target } ?? false
        case "key": keyHash.map { $0 == target } ?? false
        case "partner": presentedKey != nil && partnerID.map { $0 == target } ?? false
        default: false
        }
    }
}
