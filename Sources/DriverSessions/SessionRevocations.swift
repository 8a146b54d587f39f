import Foundation
import GatewayPrimitives
import Logging
import RedisClient
import Synchronization

/// Every gateway instance's in-process copy of the revocations that access tokens must
/// honour, so a proxied request checks revocation with no Redis round trip (docs/public-api.md).
///
/// Two kinds, both published on `pg:invalidate` by the scripts that make them:
/// - `session <F> <ms>`: a logout or a detected refresh-token reuse revoked login session F;
///   every access token whose `sid` is F is refused.
/// - `user <U> <ms>`: an admin revoked every session of U; every access token of U issued
///   at or before that moment is refused.
///
/// Entries are only ever added (a revocation is never undone), so on a lost subscription
/// nothing is dropped: the sets are re-read from Redis (`pg:revoked-sessions`,
/// `pg:revoked-users`) and merged in. Entries older than the longest access-token lifetime
/// cover no live token and are pruned.
public final class SessionRevocations: Sendable {
    private struct State {
        var sessions: [String: Int64] = [:]
        var users: [String: Int64] = [:]
        var reloads = 0
    }

    private let redis: RedisConnectionPool
    private let retention: Duration
    private let logger: Logger
    private let state = Mutex(State())
    private let initialLoad = Mutex<Task<Void, any Error>?>(nil)
    /// Set by the first completed reload; read on every bearer request, hence not under `state`.
    private let loaded = Atomic(false)

    /// - Parameter accessTTL: `tokens.access_ttl`; revocations are kept a minute longer.
    public init(redis: RedisConnectionPool, accessTTL: Duration, logger: Logger) {
        self.redis = redis
        self.retention = accessTTL + .seconds(60)
        self.logger = logger
    }

    /// Whether an access token of `userID`, session `sessionID`, issued at `issuedAt`, has
    /// been revoked.
    ///
    /// `iat` has whole seconds, so a token whose `iat` falls in the second of a user's
    /// revocation counts as revoked: it may have been issued before it. The issuing side
    /// waits out that second (``earliestIssueTime(for:after:)``), so no new token is lost.
    public func isRevoked(userID: String, sessionID: String, issuedAt: Date) -> Bool {
        state.withLock { state in
            if state.sessions[sessionID] != nil { return true }
            guard let revokedBefore = state.users[userID] else { return false }
            return Int64(issuedAt.timeIntervalSince1970.rounded(.down)) * 1000 <= revokedBefore
        }
    }

    /// Whether login session `sessionID` is known to be revoked (by logout, reuse or an admin).
    public func isSessionRevoked(_ sessionID: String) -> Bool {
        state.withLock { $0.sessions[sessionID] != nil }
    }

    /// The earliest moment a new access token of `userID` may carry as `iat` and still be
    /// valid: `now`, or the start of the second after the user's last revocation.
    public func earliestIssueTime(for userID: String, after revokedBefore: Date? = nil, now: Date = Date()) -> Date {
        let known = state.withLock { $0.users[userID] }.map { Date(timeIntervalSince1970: Double($0) / 1000) }
        guard let marker = [known, revokedBefore].compactMap({ $0 }).max() else { return now }
        let nextSecond = Date(timeIntervalSince1970: (marker.timeIntervalSince1970 + 1).rounded(.down))
        return max(now, nextSecond)
    }

    /// Applies one `pg:invalidate` message; other kinds (keys, partners) are ignored.
    public func apply(_ message: String) {
        let parts = message.split(separator: " ")
        guard parts.count == 3, let at = Int64(parts[2]) else { return }
        let target = String(parts[1])
        state.withLock { state in
            switch parts[0] {
            case "session": state.sessions[target] = max(state.sessions[target] ?? 0, at)
            case "user": state.users[target] = max(state.users[target] ?? 0, at)
            default: break
            }
        }
    }

    /// Records a revocation this instance just made, without waiting for its own message.
    public func noteSessionRevoked(_ sessionID: String, at time: Date = Date()) {
        apply("session \(sessionID) \(Int64(time.timeIntervalSince1970 * 1000))")
    }

    /// Records an admin's "revoke every session" this instance just made.
    public func noteUserRevoked(_ userID: String, at time: Date) {
        apply("user \(userID) \(Int64(time.timeIntervalSince1970 * 1000))")
    }

    /// Re-reads both revocation sets from Redis and merges them in; called when the
    /// subscription is (re)established, since messages published meanwhile were lost.
    public func reload() async throws {
        let replies = try await redis.pipeline([
            .zrange(SessionKeys.revokedSessions, 0, -1, withScores: true),
            .zrange(SessionKeys.revokedUsers, 0, -1, withScores: true),
        ])
        let sessions = try Self.pairs(replies[0].throwingServerError())
        let users = try Self.pairs(replies[1].throwingServerError())
        let cutoff = Int64(Date().addingTimeInterval(-retention.inSeconds).timeIntervalSince1970 * 1000)
        state.withLock { state in
            state.sessions.merge(sessions, uniquingKeysWith: max)
            state.users.merge(users, uniquingKeysWith: max)
            state.sessions = state.sessions.filter { $0.value >= cutoff }
            state.users = state.users.filter { $0.value >= cutoff }
            state.reloads += 1
        }
        loaded.store(true, ordering: .releasing)
    }

    /// Starts a reload in the background (the subscriber's reset hook cannot wait). A failed
    /// reload is logged; the next reset, when Redis is back, tries again.
    public func reloadInBackground() {
        Task {
            do {
                try await reload()
            } catch let error as RedisError where error == .poolClosed {
                // The process is shutting down: nothing will ask for revocations again.
            } catch {
                logger.warning("could not reload session revocations", metadata: ["error": "\(error)"])
            }
        }
    }

    /// How many reloads have completed (tests await this instead of sleeping).
    public var completedReloads: Int { state.withLock { $0.reloads } }

    /// Whether the revocation sets have been read from Redis at least once. Until then this
    /// instance knows no revocation older than its own start, so an empty answer from
    /// ``isRevoked(userID:sessionID:issuedAt:)`` proves nothing.
    public var isLoaded: Bool { loaded.load(ordering: .acquiring) }

    /// Reads the revocation sets unless that has been done once already. Concurrent callers
    /// share one read; a failed read is retried by the next caller.
    public func loadIfNeeded() async throws {
        if isLoaded { return }
        let task = initialLoad.withLock { current -> Task<Void, any Error> in
            if let current { return current }
            let task = Task { try await self.reload() }
            current = task
            return task
        }
        do {
            try await task.value
        } catch {
            initialLoad.withLock { current in
                if current == task { current = nil }
            }
            throw error
        }
    }

    private static func pairs(_ reply: RedisValue) -> [String: Int64] {
        guard let items = reply.array else { return [:] }
        var result: [String: Int64] = [:]
        var index = 0
        while index + 1 < items.count {
            if let member = items[index].string, let score = items[index + 1].string.flatMap(Double.init) {
                result[member] = Int64(score)
            }
            index += 2
        }
        return result
    }
}
