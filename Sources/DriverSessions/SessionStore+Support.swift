import DriverTokens
import Foundation
import RedisClient

/// What support staff need: find a driver by phone, see their sessions, end one of them.
extension SessionStore {
    /// The user of `phone` (hashed exactly as at login), or nil when the phone never logged in.
    public func findUser(phone: PhoneNumber) async throws -> UserSummary? {
        guard let userID = try await redis.send(.get(SessionKeys.phone(hasher.tag(for: phone)))).string,
            let fields = try await redis.send(.hmget(SessionKeys.user(userID), ["phone", "created_at"])).array
        else { return nil }
        let live = try await sessions(ofUser: userID) ?? []
        return UserSummary(
            userID: userID,
            maskedPhone: fields.first?.string ?? phone.masked,
            createdAt: Self.date(fields.count > 1 ? fields[1].string : nil),
            liveSessions: live.count
        )
    }

    /// The user's live sessions, newest first; nil when there is no such user.
    public func sessions(ofUser userID: String) async throws -> [SessionSummary]? {
        guard Self.isValidUserID(userID),
            try await redis.send(.exists(SessionKeys.user(userID))).int == 1
        else { return nil }
        let families = try await redis.send(.smembers(SessionKeys.userSessions(userID))).array?.compactMap(\.string) ?? []
        guard !families.isEmpty else { return [] }
        var commands: [RedisCommand] = []
        for family in families {
            commands.append(.hmget(SessionKeys.family(family), ["state", "user", "channel", "partner", "created_at", "refreshed_at"]))
            commands.append(.pttl(SessionKeys.family(family)))
        }
        let replies = try await redis.pipeline(commands)
        let now = Date()
        var summaries: [SessionSummary] = []
        for (index, family) in families.enumerated() {
            guard let fields = try replies[2 * index].throwingServerError().array?.map(\.string), fields.count == 6,
                fields[0] == "active", fields[1] == userID, let channel = fields[2],
                let ttl = try replies[2 * index + 1].throwingServerError().int, ttl > 0
            else { continue }
            let created = Self.date(fields[4])
            summaries.append(SessionSummary(
                sessionID: family,
                channel: channel,
                partnerID: fields[3].flatMap { $0.isEmpty ? nil : $0 },
                createdAt: created,
                lastRefreshedAt: fields[5] == nil ? created : Self.date(fields[5]),
                expiresAt: now.addingTimeInterval(Double(ttl) / 1000)
            ))
        }
        return summaries.sorted { $0.createdAt > $1.createdAt }
    }

    /// Ends one session of the user, on every instance (as logout does). Returns false when
    /// the user has no such session.
    public func revokeSession(_ sessionID: String, ofUser userID: String) async throws -> Bool {
        guard Self.isValidUserID(userID), RefreshToken.isValidFamilyID(sessionID),
            try await redis.send(.hget(SessionKeys.family(sessionID), "user")).string == userID
        else { return false }
        return try await revokeSessions([sessionID], ofUser: userID) == 1
    }

    private static func date(_ milliseconds: String?) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds.flatMap { Int64($0) } ?? 0) / 1000)
    }
}
