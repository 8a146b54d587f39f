/// One live login session as `sessions list` shows it: never a token.
struct LoginSession: Codable, Equatable {
    /// The access tokens' `sid`; what `sessions revoke --session` takes.
    let sessionID: String
    /// `otp` or `partner_sdk`.
    let channel: String
    let partnerID: String?
    let createdAt: String
    let lastRefreshedAt: String
    let expiresAt: String

    enum CodingKeys: String, CodingKey {
        case channel
        case sessionID = "session_id"
        case partnerID = "partner_id"
        case createdAt = "created_at"
        case lastRefreshedAt = "last_refreshed_at"
        case expiresAt = "expires_at"
    }

    // Written out so an OTP session's `partner_id` stays `null` in --json output.
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

extension LoginSession: TableRepresentable {
    static let columns = ["SESSION ID", "CHANNEL", "PARTNER ID", "CREATED AT", "LAST REFRESHED AT", "EXPIRES AT"]
    var cells: [String] { [sessionID, channel, partnerID ?? "-", createdAt, lastRefreshedAt, expiresAt] }
}
