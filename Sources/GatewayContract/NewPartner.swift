/// The body of `POST /v1/partners`. Unset fields are left out, so the gateway's defaults
/// apply (rate 50, burst 100, scopes `sdk_tokens:mint`, max_keys 20).
public struct NewPartner: Codable, Sendable, Hashable {
    public let name: String
    public let rate: Double?
    public let burst: Int?
    public let scopes: [String]?
    /// How many live keys the partner's members may hold (the portal).
    public let maxKeys: Int?

    public init(name: String, rate: Double? = nil, burst: Int? = nil, scopes: [String]? = nil, maxKeys: Int? = nil) {
        self.name = name
        self.rate = rate
        self.burst = burst
        self.scopes = scopes
        self.maxKeys = maxKeys
    }

    enum CodingKeys: String, CodingKey {
        case name, rate, burst, scopes
        case maxKeys = "max_keys"
    }
}
