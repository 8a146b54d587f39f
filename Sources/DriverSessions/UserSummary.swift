import Foundation

/// A user as support staff find them by phone.
public struct UserSummary: Sendable, Equatable {
    public let userID: String
    /// `******3210`: the store never holds the full number.
    public let maskedPhone: String
    public let createdAt: Date
    public let liveSessions: Int
}
