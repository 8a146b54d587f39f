import DriverSessions
import Foundation
import Hummingbird

/// The admin API's JSON for support staff's session management (docs/ADMIN_API.md):
/// finding a driver by phone, listing their sessions, revoking one. Never a token, never a
/// full phone number.

struct FindUserRequest: Decodable {
    let phone: String
}

struct UserFoundBody: ResponseEncodable {
    let userID: String
    let phone: String
    let createdAt: Date
    let liveSessions: Int

    enum CodingKeys: String, CodingKey {
        case phone
        case userID = "user_id"
        case createdAt = "created_at"
        case liveSessions = "live_sessions"
    }

    init(_ user: UserSummary) {
        userID = user.userID
        phone = user.maskedPhone
        createdAt = user.createdAt
        liveSessions = user.liveSessions
    }
}

struct SessionBody: Encodable {
    let sessionID: String
    let channel: String
    let partnerID: String?
    let createdAt: Date
    let lastRefreshedAt: Date
    let expiresAt: Date

    enum CodingKeys: String, CodingKey {
        case channel
        case sessionID = "session_id"
        case partnerID = "partner_id"
        case createdAt = "created_at"
        case lastRefreshedAt = "last_refreshed_at"
        case expiresAt = "expires_at"
    }

    init(_ session: SessionSummary) {
        sessionID = session.sessionID
        channel = session.channel
        partnerID = session.partnerID
        createdAt = session.createdAt
        lastRefreshedAt = session.lastRefreshedAt
        expiresAt = session.expiresAt
    }

    // `partner_id` stays present as `null` for OTP sessions, like every optional admin field.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sessionID, forKey: .sessionID)
        try container.encode(channel, forKey: .channel)
        try container.encode(partnerID, forKey: .partnerID)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(lastRefreshedAt, forKey: .lastRefreshedAt)
        try container.encode(expiresAt, forKey: .expiresAt)
    }
}

struct SingleSessionRevocationBody: ResponseEncodable {
    let userID: String
    let sessionID: String
    let revokedAt: Date

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case sessionID = "session_id"
        case revokedAt = "revoked_at"
    }
}
