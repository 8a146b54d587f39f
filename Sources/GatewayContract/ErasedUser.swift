import Foundation

/// The response to erasing a driver: what is left of them is their id in the audit trail.
public struct ErasedUser: Codable, Sendable, Hashable {
    public let userID: String
    public let erasedAt: Date

    public init(userID: String, erasedAt: Date) {
        self.userID = userID
        self.erasedAt = erasedAt
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case erasedAt = "erased_at"
    }
}
