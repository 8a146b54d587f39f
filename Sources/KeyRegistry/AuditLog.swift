import Foundation
import RedisClient

/// The append-only record of admin actions: a Redis stream, capped at about
/// ``AuditLog/maximumEntries`` entries (oldest trimmed first).
public struct AuditLog: Sendable {
    public struct Entry: Sendable, Hashable {
        public var at: Date
        /// Who acted, as the caller declared it (the admin token is shared).
        public var actor: String
        /// `partner.create`, `key.rotate`, ...
        public var action: String
        /// The id acted on.
        public var target: String
        /// The caller's address.
        public var source: String

        public init(at: Date, actor: String, action: String, target: String, source: String) {
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
        _ = try await redis.send(RedisCommand("XADD", [
            RegistryKeys.audit, "MAXLEN", "~", String(Self.maximumEntries), "*",
            "at", KeyRegistry.timestamp(entry.at), "actor", entry.actor, "action", entry.action,
            "target", entry.target, "source", entry.source,
        ]))
    }

    /// The newest `limit` entries, newest first.
    public func newest(_ limit: Int) async throws -> [Entry] {
        let reply = try await redis.send(RedisCommand("XREVRANGE", RegistryKeys.audit, "+", "-", "COUNT", String(limit)))
        return (reply.array ?? []).compactMap { item in
            guard let parts = item.array, parts.count == 2 else { return nil }
            let fields = KeyRegistry.hashFields(parts[1])
            return Entry(
                at: KeyRegistry.date(fields["at"]) ?? Date(timeIntervalSince1970: 0),
                actor: fields["actor"] ?? "",
                action: fields["action"] ?? "",
                target: fields["target"] ?? "",
                source: fields["source"] ?? ""
            )
        }
    }
}
