/// The body of `PATCH /v1/keys/{key_id}` (and of the portal's `PATCH /portal/v1/keys/{key_id}`,
/// which ignores `meta`): only the fields present change; `"quota": null` removes the key's quota.
public struct KeyUpdate: Codable, Sendable, Hashable {
    public let allowedCIDRs: [String]?
    public let quota: QuotaSetting?
    /// Whether the body said `"quota": null`.
    public let removesQuota: Bool
    public let name: String?
    public let meta: [String: String]?
    /// The key's new scopes: its partner's or fewer.
    public let scopes: [String]?

    public init(
        allowedCIDRs: [String]? = nil, quota: QuotaSetting? = nil, removesQuota: Bool = false, name: String? = nil, meta: [String: String]? = nil,
        scopes: [String]? = nil
    ) {
        self.scopes = scopes
        self.allowedCIDRs = allowedCIDRs
        self.quota = quota
        self.removesQuota = removesQuota
        self.name = name
        self.meta = meta
    }

    /// Nothing to change: the API refuses it rather than write an audit entry for nothing.
    public var isEmpty: Bool { allowedCIDRs == nil && quota == nil && !removesQuota && name == nil && meta == nil && scopes == nil }

    enum CodingKeys: String, CodingKey {
        case quota, name, meta, scopes
        case allowedCIDRs = "allowed_cidrs"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        allowedCIDRs = try container.decodeIfPresent([String].self, forKey: .allowedCIDRs)
        removesQuota = container.contains(.quota) ? try container.decodeNil(forKey: .quota) : false
        quota = removesQuota ? nil : try container.decodeIfPresent(QuotaSetting.self, forKey: .quota)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        meta = try container.decodeIfPresent([String: String].self, forKey: .meta)
        scopes = try container.decodeIfPresent([String].self, forKey: .scopes)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(allowedCIDRs, forKey: .allowedCIDRs)
        if removesQuota { try container.encodeNil(forKey: .quota) } else { try container.encodeIfPresent(quota, forKey: .quota) }
        try container.encodeIfPresent(name, forKey: .name)
        try container.encodeIfPresent(meta, forKey: .meta)
        try container.encodeIfPresent(scopes, forKey: .scopes)
    }
}
