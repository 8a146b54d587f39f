import Foundation

/// The response to `POST /v1/users/find`: who a phone number belongs to, never the number
/// itself.
public struct FoundUser: Codable, Sendable, Hashable {
    public let userID: String
    /// Masked: `******3210`.
    public let phone: String
    public let createdAt: Date
    public let liveSessions: Int

    public init(userID: String, phone: String, createdAt: Date, liveSessions: Int) {
        self.userID = userID
        self.phone = phone
        self.createdAt = createdAt
        self.liveSessions = liveSessions
    }

    enum CodingKeys: String, CodingKey {
        case phone
        case userID = "user_id"
        case createdAt = "created_at"
        case liveSessions = "live_sessions"
    }
}
