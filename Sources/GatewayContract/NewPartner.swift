/// The body of `POST /v1/partners`. Unset fields are left out, so the gateway's defaults
/// apply (rate 50, burst 100, scopes `sdk_tokens:mint`).
public struct NewPartner: Codable, Sendable, Hashable {
    public let name: String
    public let rate: Double?
    public let burst: Int?
    public let scopes: [String]?

    public init(name: String, rate: Double? = nil, burst: Int? = nil, scopes: [String]? = nil) {
        self.name = name
        self.rate = rate
        self.burst = burst
        self.scopes = scopes
    }
}
