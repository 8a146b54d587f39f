/// The answer to `keys revoke`.
struct RevokedKey: Codable, Equatable {
    let keyID: String
    /// Always `revoked`.
    let status: String

    enum CodingKeys: String, CodingKey {
        case keyID = "key_id"
        case status
    }
}
