/// The answer to `users find`: who a phone number belongs to, never the number itself.
struct FoundUser: Codable, Equatable {
    let userID: String
    /// Masked: `******3210`.
    let phone: String
    let createdAt: String
    let liveSessions: Int

    enum CodingKeys: String, CodingKey {
        case phone
        case userID = "user_id"
        case createdAt = "created_at"
        case liveSessions = "live_sessions"
    }
}

extension FoundUser: TableRepresentable {
    static let columns = ["USER ID", "PHONE", "CREATED AT", "LIVE SESSIONS"]
    var cells: [String] { [userID, phone, createdAt, String(liveSessions)] }
}
