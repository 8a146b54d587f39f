/// The answer to `sessions revoke --session`: that one login's tokens stop working.
struct RevokedSession: Codable, Equatable {
    let userID: String
    let sessionID: String
    let revokedAt: String

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case sessionID = "session_id"
        case revokedAt = "revoked_at"
    }
}

extension RevokedSession: TableRepresentable {
    static let columns = ["USER ID", "SESSION ID", "REVOKED AT"]
    var cells: [String] { [userID, sessionID, revokedAt] }
}
