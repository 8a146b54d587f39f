import Foundation

/// One live login session of a user (`GET /v1/users/{id}/sessions`): never a token.
public struct LoginSession: Codable, Sendable, Hashable {
    /// The access tokens' `sid`; what revoking one session takes.
    public let sessionID: String
    /// `otp` or `partner_sdk`.
    public let channel: String
    public let partnerID: String?
    public let createdAt: Date
    public let lastRefreshedAt: Date
    public let expiresAt: Date

    public init(sessionID: String, channel: String, partnerID: String?, createdAt: Date, lastRefreshedAt: Date, expiresAt: Date) {
        self.sessionID = sessionID
        self.channel = channel
        self.partnerID = partnerID
        self.createdAt = createdAt
        self.lastRefreshedAt = lastRefreshedAt
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case channel
        case sessionID = "session_id"
        case partnerID = "partner_id"
        case createdAt = "created_at"
        case lastRefreshedAt = "last_refreshed_at"
        case expiresAt = "expires_at"
    }

    // Written out so an OTP session's `partner_id` stays present as `null`, like every
    // optional admin field.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sessionID, forKey: .sessionID)
        try container.encode(channel, forKey: .channel)
        try container.encode(partnerID, forKey: .partnerID)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(lastRefreshedAt, forKey: .lastRefreshedAt)
        try container.encode(expiresAt, forKey: .expiresAt)
    }
}
