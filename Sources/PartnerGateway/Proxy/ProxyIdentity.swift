import DriverTokens
import KeyRegistry

/// Who the gateway says the caller is, as the upstream will read it.
struct ProxyIdentity: Sendable {
    var userID: String?
    var partnerID: String?
    var channel: String?
    /// The signed `X-Gateway-Assertion`; only authenticated routes get one, once admitted.
    var assertion: String?

    /// `auth: none`: nobody in particular.
    static let anonymous = ProxyIdentity()

    /// A driver's verified access token.
    init(claims: AccessTokenClaims) {
        self.init(userID: claims.userID, partnerID: claims.channel.partnerID, channel: claims.channel.name)
    }

    /// A partner's backend (no user): `X-Gateway-Auth-Channel: api_key`.
    init(partner: APIKeyAuthenticator.Identity) {
        self.init(partnerID: partner.partner.id, channel: "api_key")
    }

    init(userID: String? = nil, partnerID: String? = nil, channel: String? = nil, assertion: String? = nil) {
        self.userID = userID
        self.partnerID = partnerID
        self.channel = channel
        self.assertion = assertion
    }

    /// Who the assertion is about: the user, or for api_key routes the partner.
    var subject: String? { userID ?? partnerID }

    /// Adds the identity headers the upstream reads (straight into the upstream's head: this
    /// runs for every proxied request).
    func addHeaders(to head: inout UpstreamRequestHead) {
        if let userID { head.add(name: "X-Gateway-User-Id", value: userID) }
        if let channel { head.add(name: "X-Gateway-Auth-Channel", value: channel) }
        if let partnerID { head.add(name: "X-Gateway-Partner-Id", value: partnerID) }
        if let assertion { head.add(name: "X-Gateway-Assertion", value: assertion) }
    }
}
