import DriverTokens
import GatewayPrimitives
import KeyRegistry

/// Who the gateway says the caller is, as the upstream will read it.
///
/// A class, and kept per connection (``AdmissionMemo``): the admission, the upstream
/// head and the finished record all hold it, and a struct of strings would retain and release each
/// per copy; a busy caller's strings (from the shared token and assertion caches) are the same
/// objects on every event loop, so those counts would bounce between cores.
package final class ProxyIdentity: Sendable {
    package let userID: String?
    package let partnerID: String?
    package let channel: String?
    /// The API key's id (`key_...`) on `api_key` routes: `X-Gateway-Key-Id`, the access log's
    /// and the span's.
    package let keyID: String?
    /// The API key's scopes (`api_key` routes): what the verify API answers.
    package let scopes: [String]?
    /// The quotas the request counts against (``QuotaBuckets``), on `api_key` routes.
    package let keyQuota: Quota?
    package let partnerQuota: Quota?
    /// The signed `X-Gateway-Assertion`; only authenticated routes get one, once admitted.
    package let assertion: String?

    /// `auth: none`: nobody in particular.
    package static let anonymous = ProxyIdentity()

    /// A driver's verified access token.
    package convenience init(claims: AccessTokenClaims) {
        self.init(userID: claims.userID, partnerID: claims.channel.partnerID, channel: claims.channel.name)
    }

    /// A partner's backend (no user): `X-Gateway-Auth-Channel: api_key`.
    package convenience init(partner: APIKeyAuthenticator.Identity) {
        self.init(
            partnerID: partner.partner.id, channel: "api_key", keyID: partner.key.id, scopes: partner.key.scopes,
            keyQuota: partner.key.quota, partnerQuota: partner.partner.quota
        )
    }

    package init(
        userID: String? = nil, partnerID: String? = nil, channel: String? = nil, keyID: String? = nil, scopes: [String]? = nil,
        keyQuota: Quota? = nil, partnerQuota: Quota? = nil, assertion: String? = nil
    ) {
        self.userID = userID
        self.partnerID = partnerID
        self.channel = channel
        self.keyID = keyID
        self.scopes = scopes
        self.keyQuota = keyQuota
        self.partnerQuota = partnerQuota
        self.assertion = assertion
    }

    /// The same caller, carrying `assertion`.
    package func with(assertion: String?) -> ProxyIdentity {
        ProxyIdentity(
            userID: userID, partnerID: partnerID, channel: channel, keyID: keyID, scopes: scopes, keyQuota: keyQuota,
            partnerQuota: partnerQuota, assertion: assertion
        )
    }

    /// The identity fields an upstream is told the caller by, in order, each one this caller
    /// has: the one list the proxy's upstream head and the authorization listener's answers
    /// to edges are both written from.
    package func forEachField(_ visit: (_ field: HeaderName.Field, _ value: String) -> Void) {
        if let userID { visit(HeaderName.gatewayUserID, userID) }
        if let channel { visit(HeaderName.gatewayAuthChannel, channel) }
        if let partnerID { visit(HeaderName.gatewayPartnerID, partnerID) }
        if let keyID { visit(HeaderName.gatewayKeyID, keyID) }
        if let assertion { visit(HeaderName.gatewayAssertion, assertion) }
    }

    /// Every field ``forEachField(_:)`` can write, whether this caller has it or not.
    package static let fields = [
        HeaderName.gatewayUserID, HeaderName.gatewayAuthChannel, HeaderName.gatewayPartnerID, HeaderName.gatewayKeyID,
        HeaderName.gatewayAssertion,
    ]

    /// Whether this is the caller `claims` name (the assertion aside).
    package func isCaller(of claims: AccessTokenClaims) -> Bool {
        names(userID: claims.userID, partnerID: claims.channel.partnerID, channel: claims.channel.name)
    }

    /// Whether this is the partner's backend `partner` names (the assertion aside).
    package func isCaller(of partner: APIKeyAuthenticator.Identity) -> Bool {
        names(userID: nil, partnerID: partner.partner.id, channel: "api_key") && keyID == partner.key.id
            && keyQuota == partner.key.quota && partnerQuota == partner.partner.quota && scopes == partner.key.scopes
    }

    /// Whether `other` names the same caller (the assertion aside).
    package func isSameCaller(as other: ProxyIdentity) -> Bool {
        names(userID: other.userID, partnerID: other.partnerID, channel: other.channel) && keyID == other.keyID
            && keyQuota == other.keyQuota && partnerQuota == other.partnerQuota && scopes == other.scopes
    }

    private func names(userID: String?, partnerID: String?, channel: String?) -> Bool {
        self.userID == userID && self.partnerID == partnerID && self.channel == channel
    }

    /// Who the assertion is about: the user, or for api_key routes the partner.
    package var subject: String? { userID ?? partnerID }
}
