import Foundation
import GatewayPrimitives
import RedisClient

extension SessionStore {
    /// Erases a driver: every session revoked at once, then everything keyed by the user or
    /// by their phone's digest deleted (the user record and session set, the sessions and
    /// every refresh-token record they still list, spent ones too, the phone index, OTP state
    /// and failure count), and the
    /// user dropped from the revoked-users set. Returns the phone's digest (`nil` for a user
    /// who never logged in since digests were kept), for the caller's own keys (rate-limit
    /// buckets), and the sessions revoked; nil when there is no such user.
    ///
    /// The order keeps every step safe to repeat after a failure until the user record goes,
    /// which is last but one: sessions are announced as revoked (every instance refuses their
    /// access tokens) and scrubbed, the phone's keys deleted (its next login is a new user),
    /// the caller's own keys deleted (`beforeRecordGoes`, given the phone's digest), then the
    /// record; sessions that joined meanwhile are scrubbed too. A failure before the record
    /// goes leaves the user to erase again; after it, nothing of the caller's is left.
    public func erase(
        userID: String, beforeRecordGoes: @Sendable (_ phoneTag: String?) async throws -> Void = { _ in }
    ) async throws -> (phoneTag: String?, sessions: [String], erasedAt: Date)? {
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
        try await beforeRecordGoes(phoneTag)
        let erased = try await redis.run(SessionScripts.eraseUser, keys: [SessionKeys.user(userID), SessionKeys.userSessions(userID)], arguments: [])
        let late = (erased.array ?? []).dropFirst().compactMap(\.string).filter { !families.contains($0) }
        try await scrub(late)
        families += late
        try await announce(families, phase: "final")
        _ = try await redis.send(.zrem(SessionKeys.revokedUsers, [userID]))
        return (phoneTag, families, Date())
    }

    /// Lists the sessions as revoked (pending: never trimmed until final), then replaces each
    /// family with a bare tombstone and deletes its token records (current, previous and
    /// spent, and any a rotation added meanwhile), in parallel.
    private func scrub(_ families: [String]) async throws {
        guard !families.isEmpty else { return }
        try await announce(families, phase: "pending")
        let tombstone = String(Self.tombstoneLifetime.inMilliseconds)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for family in families {
                group.addTask {
                    let spent = SessionKeys.spentTokens(family: family)
                    let read = try await redis.pipeline([.hmget(SessionKeys.family(family), ["current", "previous"]), .zrange(spent, 0, -1)])
                    var hashes = Set<String>()
                    for reply in read { hashes.formUnion(try reply.throwingServerError().array?.compactMap(\.string) ?? []) }
                    hashes.remove("")
                    let known = hashes.sorted()
                    let records = { (hashes: [String]) in hashes.map { SessionKeys.refreshToken(family: family, hash: $0) } }
                    let late = try await redis.run(
                        SessionScripts.eraseFamily, keys: [SessionKeys.family(family), spent] + records(known), arguments: [tombstone] + known
                    )
                    let lateRecords = records(try late.throwingServerError().array?.compactMap(\.string) ?? [])
                    if !lateRecords.isEmpty { _ = try await redis.send(.del(lateRecords)) }
                }
            }
            try await group.waitForAll()
        }
    }
}
