/// The answer to `sessions revoke`: tokens of `userID` issued before `revokedAt` stop working.
struct SessionRevocation: Codable, Equatable {
    let userID: String
    let revokedAt: String

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case revokedAt = "revoked_at"
    }
}
