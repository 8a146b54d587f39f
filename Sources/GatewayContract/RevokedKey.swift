/// The response to a revocation.
public struct RevokedKey: Codable, Sendable, Hashable {
    public let keyID: String
    /// Always `revoked`.
    public let status: String

    public init(keyID: String, status: String = "revoked") {
        self.keyID = keyID
        self.status = status
    }

    enum CodingKeys: String, CodingKey {
        case status
        case keyID = "key_id"
    }
}
