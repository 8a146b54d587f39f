import Foundation
import RedisClient

/// The append-only record of admin actions: a Redis stream, capped at about
/// ``AuditLog/maximumEntries`` entries (oldest trimmed first).
public struct AuditLog: Sendable {
    public struct Entry: Sendable, Hashable {
        /// The stream entry's id (`1732246200000-0`): its place in the log, empty until appended.
        public var id: String
        public var at: Date
        /// Who acted, as the caller declared it (the admin token is shared).
        public var actor: String
        /// `partner.create`, `key.rotate`, ...
        public var action: String
        /// The id acted on.
        public var target: String
        /// The caller's address.
        public var source: String

        public init(id: String = "", at: Date, actor: String, action: String, target: String, source: String) {
            self.id = id
            self.at = at
            self.actor = actor
            self.action = action
            self.target = target
            self.source = source
        }
    }

    public static let maximumEntries = 1_000_000
    private let redis: RedisConnectionPool

    public init(redis: RedisConnectionPool) {
        self.redis = redis
    }

    public func append(_ entry: Entry) async throws {
        _ = try await redis.send(.xadd(RegistryKeys.audit, maximumLength: Self.maximumEntries, fieldsAndValues: [
            "at", KeyRegistry.timestamp(entry.at), "actor", entry.actor, "action", entry.action,
            "target", entry.target, "source", entry.source,
        ]))
    }

    /// The newest `limit` entries, newest first.
    public func newest(_ limit: Int) async throws -> [Entry] {
        try await newest(limit, before: nil).entries
    }

    /// Up to `limit` entries older than the entry `before` (from the newest when nil), newest
    /// first; `more` tells whether older ones follow. A `before` that is not an entry id is
    /// refused with ``KeyRegistryError/Code/unknownCursor``.
    public func newest(_ limit: Int, before: String?) async throws -> (entries: [Entry], more: Bool) {
        var end = "+"
        if let before {
            guard let id = Self.entryID(before) else { throw KeyRegistryError(.unknownCursor, "\(before) is not an audit entry id") }
            // Nothing is older than the first possible id (and Redis refuses `(0-0`).
            if id == (0, 0) { return ([], false) }
            end = "(" + before
        }
        let reply = try await redis.send(.xrevrange(RegistryKeys.audit, end: end, start: "-", count: limit + 1))
        var entries: [Entry] = (reply.array ?? []).compactMap { item in
            guard let parts = item.array, parts.count == 2, let id = parts[0].string else { return nil }
            let fields = KeyRegistry.hashFields(parts[1])
            return Entry(
                id: id,
                at: KeyRegistry.date(fields["at"]) ?? Date(timeIntervalSince1970: 0),
                actor: fields["actor"] ?? "",
                action: fields["action"] ?? "",
                target: fields["target"] ?? "",
                source: fields["source"] ?? ""
            )
        }
        let more = entries.count > limit
        if more { entries.removeLast() }
        return (entries, more)
    }

    /// `<milliseconds>-<sequence>`, both decimal 64-bit numbers: what Redis accepts as a
    /// stream id; nil for anything else.
    static func entryID(_ text: String) -> (UInt64, UInt64)? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }),
              let milliseconds = UInt64(parts[0]), let sequence = UInt64(parts[1]) else { return nil }
        return (milliseconds, sequence)
    }
}
