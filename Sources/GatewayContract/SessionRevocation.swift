import Foundation

/// The response to revoking a user's sessions: tokens issued before `revokedAt` stop working.
public struct SessionRevocation: Codable, Sendable, Hashable {
    public let userID: String
    public let revokedAt: Date

    public init(userID: String, revokedAt: Date) {
        self.userID = userID
        self.revokedAt = revokedAt
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case revokedAt = "revoked_at"
    }
}
