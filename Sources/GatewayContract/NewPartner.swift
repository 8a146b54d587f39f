/// The body of `POST /v1/partners`. Unset fields are left out, so the gateway's defaults
/// apply (rate 50, burst 100, scopes `sdk_tokens:mint`, any address, no quota, active,
/// max_keys 20, an id it issues).
public struct NewPartner: Codable, Sendable, Hashable {
    /// The id to create the partner under (`ptr_` and 16 hex), as a state file names it;
    /// nil to have one issued. An id already taken is `409 CONFLICT`.
    public let partnerID: String?
    public let name: String
    public let rate: Double?
    public let burst: Int?
    public let scopes: [String]?
    public let allowedCIDRs: [String]?
    public let quota: QuotaSetting?
    /// `active` or `disabled`.
    public let status: String?
    /// How many live keys the partner's members may hold (the portal).
    public let maxKeys: Int?

    public init(
        partnerID: String? = nil, name: String, rate: Double? = nil, burst: Int? = nil, scopes: [String]? = nil,
        allowedCIDRs: [String]? = nil, quota: QuotaSetting? = nil, status: String? = nil, maxKeys: Int? = nil
    ) {
        self.partnerID = partnerID
        self.name = name
        self.rate = rate
        self.burst = burst
        self.scopes = scopes
        self.allowedCIDRs = allowedCIDRs
        self.quota = quota
        self.status = status
        self.maxKeys = maxKeys
    }

    enum CodingKeys: String, CodingKey {
        case name, rate, burst, scopes, quota, status
        case partnerID = "partner_id"
        case allowedCIDRs = "allowed_cidrs"
        case maxKeys = "max_keys"
    }
}
