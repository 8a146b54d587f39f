/// The body of `POST /v1/keys/{key_id}/rotate`. Without `grace` the gateway's default (24h)
/// applies; `0s` ends the old key at once.
public struct KeyRotation: Codable, Sendable, Hashable {
    /// A duration in ``GatewayDuration``'s grammar.
    public let grace: String?

    public init(grace: String? = nil) {
        self.grace = grace
    }
}
