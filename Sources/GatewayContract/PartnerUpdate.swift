/// The body of `PATCH /v1/partners/{partner_id}`: only the fields present change (JSON Merge
/// Patch semantics; `null` only for `quota`, which it removes, since every other field is
/// required on a partner). Every field given changes in one step.
public struct PartnerUpdate: Codable, Sendable, Hashable {
    public let name: String?
    public let rate: Double?
    public let burst: Int?
    public let scopes: [String]?
    public let allowedCIDRs: [String]?
    public let quota: QuotaSetting?
    /// Whether the body said `"quota": null`.
    public let removesQuota: Bool
    /// `active` or `disabled`: what enable and disable set, here together with the rest.
    public let status: String?
    public let maxKeys: Int?

    public init(
        name: String? = nil, rate: Double? = nil, burst: Int? = nil, scopes: [String]? = nil,
        allowedCIDRs: [String]? = nil, quota: QuotaSetting? = nil, removesQuota: Bool = false, status: String? = nil,
        maxKeys: Int? = nil
    ) {
        self.maxKeys = maxKeys
        self.name = name
        self.rate = rate
        self.burst = burst
        self.scopes = scopes
        self.allowedCIDRs = allowedCIDRs
        self.quota = quota
        self.removesQuota = removesQuota
        self.status = status
    }

    /// Nothing to change: the API refuses it rather than write an audit entry for nothing.
    public var isEmpty: Bool {
        name == nil && rate == nil && burst == nil && scopes == nil && allowedCIDRs == nil && quota == nil && !removesQuota
            && status == nil && maxKeys == nil
    }

    enum CodingKeys: String, CodingKey {
        case name, rate, burst, scopes, quota, status
        case allowedCIDRs = "allowed_cidrs"
        case maxKeys = "max_keys"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        rate = try container.decodeIfPresent(Double.self, forKey: .rate)
        burst = try container.decodeIfPresent(Int.self, forKey: .burst)
        scopes = try container.decodeIfPresent([String].self, forKey: .scopes)
        allowedCIDRs = try container.decodeIfPresent([String].self, forKey: .allowedCIDRs)
        removesQuota = container.contains(.quota) ? try container.decodeNil(forKey: .quota) : false
        quota = removesQuota ? nil : try container.decodeIfPresent(QuotaSetting.self, forKey: .quota)
        status = try container.decodeIfPresent(String.self, forKey: .status)
        maxKeys = try container.decodeIfPresent(Int.self, forKey: .maxKeys)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encodeIfPresent(rate, forKey: .rate)
        try container.encodeIfPresent(burst, forKey: .burst)
        try container.encodeIfPresent(scopes, forKey: .scopes)
        try container.encodeIfPresent(allowedCIDRs, forKey: .allowedCIDRs)
        if removesQuota { try container.encodeNil(forKey: .quota) } else { try container.encodeIfPresent(quota, forKey: .quota) }
        try container.encodeIfPresent(status, forKey: .status)
        try container.encodeIfPresent(maxKeys, forKey: .maxKeys)
    }
}
