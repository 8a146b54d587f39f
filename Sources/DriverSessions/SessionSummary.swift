import Foundation

/// One live login session as support staff see it: never a token.
public struct SessionSummary: Sendable, Equatable {
    /// The family id, the access tokens' `sid`.
    public let sessionID: String
    /// `otp` or `partner_sdk`.
    public let channel: String
    /// The partner that minted it (SDK channel), else nil.
    public let partnerID: String?
    public let createdAt: Date
    /// The last rotation, or the login when it never rotated.
    public let lastRefreshedAt: Date
    /// When its refresh token dies unless used (each rotation renews it).
    public let expiresAt: Date
}
