import Foundation

/// The response to revoking one session: that login's tokens stop working.
public struct RevokedSession: Codable, Sendable, Hashable {
    public let userID: String
    public let sessionID: String
    public let revokedAt: Date

    public init(userID: String, sessionID: String, revokedAt: Date) {
        self.userID = userID
        self.sessionID = sessionID
        self.revokedAt = revokedAt
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case sessionID = "session_id"
        case revokedAt = "revoked_at"
    }
}
