import DriverTokens
import Foundation
import GatewayConfiguration
import NIOHTTP1
import KeyRegistry

/// What an upgraded connection was opened with: enough to tell, when a revocation or a key
/// change is announced, whether it ends this connection (``UpgradedConnections``). Memory
/// only; the presented key is kept to verify it again, never logged.
package struct UpgradedCredential: Sendable {
    package var userID: String?
    package var sessionID: String?
    /// The access token's `iat` and `exp`.
    package var issuedAt: Date?
    package var expiresAt: Date?
    package var partnerID: String?
    package var keyHash: String?
    package var presentedKey: String?
    package var scope: String?

    package init(
        userID: String? = nil, sessionID: String? = nil, issuedAt: Date? = nil, expiresAt: Date? = nil, partnerID: String? = nil,
        keyHash: String? = nil, presentedKey: String? = nil, scope: String? = nil
    ) {
        self.userID = userID
        self.sessionID = sessionID
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.partnerID = partnerID
        self.keyHash = keyHash
        self.presentedKey = presentedKey
        self.scope = scope
    }

    /// A driver's access token.
    package init(claims: AccessTokenClaims) {
        self.init(
            userID: claims.userID, sessionID: claims.sessionID, issuedAt: claims.issuedAt, expiresAt: claims.expiresAt,
            partnerID: claims.channel.partnerID
        )
    }

    /// A partner's key, as presented.
    package init(presentedKey: String, partnerID: String?, scope: String) {
        self.init(partnerID: partnerID, keyHash: APIKey(presentedKey)?.hash, presentedKey: presentedKey, scope: scope.isEmpty ? nil : scope)
    }

    /// The credential of an admitted handshake on `request`'s route: the token's claims as the
    /// verifier's cache holds them (it verified them moments ago), or the key as presented.
    static func of(_ request: ProxyEngine.Request, identity: ProxyIdentity, engine: ProxyEngine) -> UpgradedCredential {
        let fields = request.head.headers
        switch request.route.auth {
        case .none:
            return UpgradedCredential()
        case .bearer:
            var last: BearerAuthenticator.LastToken?
            if let claims = engine.bearer.cachedClaims(authorization: fields.first(name: "authorization"), last: &last) {
                return UpgradedCredential(claims: claims)
            }
            return UpgradedCredential(userID: identity.userID, partnerID: identity.partnerID)
        case .apiKey:
            guard let presented = fields.first(name: "x-api-key") else { return UpgradedCredential(partnerID: identity.partnerID) }
            return UpgradedCredential(presentedKey: presented, partnerID: identity.partnerID, scope: request.route.scope)
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
