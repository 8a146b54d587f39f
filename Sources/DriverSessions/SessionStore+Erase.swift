import Foundation
import GatewayPrimitives
import RedisClient

extension SessionStore {
    /// Erases a driver: every session revoked at once, then everything keyed by the user or
    /// by their phone's digest deleted (the user record and session set, the sessions and
    /// their refresh-token records, the phone index, OTP state and failure count), and the
    /// user dropped from the revoked-users set. Returns the phone's digest (`nil` for a user
    /// who never logged in since digests were kept), for the caller's own keys (rate-limit
    /// buckets), and the sessions revoked; nil when there is no such user.
    ///
    /// The order keeps every step safe to repeat after a failure until the user record goes,
    /// which is last but one: sessions are announced as revoked (every instance refuses their
    /// access tokens) and scrubbed, the phone's keys deleted (its next login is a new user),
    /// then the record; sessions that joined meanwhile are scrubbed too.
    public func erase(userID: String) async throws -> (phoneTag: String?, sessions: [String], erasedAt: Date)? {
        guard Self.isValidUserID(userID) else { return nil }
        let read = try await redis.pipeline([
            .exists(SessionKeys.user(userID)), .hget(SessionKeys.user(userID), "phone_tag"), .smembers(SessionKeys.userSessions(userID)),
        ])
        guard try read[0].throwingServerError().int == 1 else { return nil }
        let phoneTag = try read[1].throwingServerError().string.flatMap { $0.isEmpty ? nil : $0 }
        var families = try read[2].throwingServerError().array?.compactMap(\.string) ?? []
        try await scrub(families)

        if let phoneTag {
            _ = try await redis.run(SessionScripts.releasePhone, keys: [SessionKeys.phone(phoneTag)], arguments: [userID])
            _ = try await redis.send(.del([SessionKeys.otp(phoneTag)]))
            _ = try await redis.send(.del([SessionKeys.otpFailures(phoneTag)]))
        }
        let erased = try await redis.run(SessionScripts.eraseUser, keys: [SessionKeys.user(userID), SessionKeys.userSessions(userID)], arguments: [])
        let late = (erased.array ?? []).dropFirst().compactMap(\.string).filter { !families.contains($0) }
        try await scrub(late)
        families += late
        try await announce(families, phase: "final")
        _ = try await redis.send(.zrem(SessionKeys.revokedUsers, [userID]))
        return (phoneTag, families, Date())
    }

    /// Lists the sessions as revoked (pending: never trimmed until final), then replaces each
    /// family with a bare tombstone and deletes its known token records, in parallel.
    private func scrub(_ families: [String]) async throws {
        guard !families.isEmpty else { return }
        try await announce(families, phase: "pending")
        let tombstone = String(Self.tombstoneLifetime.inMilliseconds)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for family in families {
                group.addTask {
                    let tokens = try await redis.send(.hmget(SessionKeys.family(family), ["current", "previous"])).array?.compactMap(\.string) ?? []
                    let records = Set(tokens.filter { !$0.isEmpty }).sorted().map { SessionKeys.refreshToken(family: family, hash: $0) }
                    _ = try await redis.run(SessionScripts.eraseFamily, keys: [SessionKeys.family(family)] + records, arguments: [tombstone])
                }
            }
            try await group.waitForAll()
        }
    }
}
