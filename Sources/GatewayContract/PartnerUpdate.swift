/// The body of `PATCH /v1/partners/{partner_id}`: only the fields present change (JSON Merge
/// Patch semantics without `null`, since every field is required on a partner).
public struct PartnerUpdate: Codable, Sendable, Hashable {
    public let name: String?
    public let rate: Double?
    public let burst: Int?
    public let scopes: [String]?

    public init(name: String? = nil, rate: Double? = nil, burst: Int? = nil, scopes: [String]? = nil) {
        self.name = name
        self.rate = rate
        self.burst = burst
        self.scopes = scopes
    }

    /// Nothing to change: the API refuses it rather than write an audit entry for nothing.
    public var isEmpty: Bool { name == nil && rate == nil && burst == nil && scopes == nil }
}
