import Foundation
import GatewayContract
import RedisClient

/// The append-only record of admin actions: a Redis stream, capped at about
/// ``AuditLog/maximumEntries`` entries (oldest trimmed first), whose entries form a hash chain
/// (``GatewayContract/AuditChain``): each carries its number, the previous entry's hash and its
/// own, so a changed, removed or inserted entry shows.
///
/// Appending is one compare-and-append script on the one stream key (Redis Cluster safe): the
/// gateway computes the SHA-256 (Redis Lua has only SHA-1), the script appends only if the
/// stream's newest entry is still the one hashed against, and otherwise answers the real head
/// so the gateway re-hashes and tries again (``AuditChainWriter``).
public struct AuditLog: Sendable {
    public struct Entry: Sendable, Hashable {
        /// The stream entry's id (`1732246200000-0`): its place in the log, empty until appended.
        public var id: String
        /// The entry's number in the chain; nil until appended (and for pre-chain entries).
        public var seq: Int?
        public var at: Date
        /// The credential's name (`root` for the break-glass token).
        public var actor: String
        /// The credential's id (`adm_...` or `root`); empty for pre-chain entries.
        public var actorID: String
        /// `partner.create`, `key.rotate`, `access.refused`, ...
        public var action: String
        /// The id acted on.
        public var target: String
        /// The caller's address.
        public var source: String
        /// The caller's free-text `X-Admin-Actor`, if any.
        public var note: String
        public var prevHash: String?
        public var hash: String?

        public init(
            id: String = "", at: Date, actor: String, actorID: String = "", action: String, target: String, source: String,
            note: String = ""
        ) {
            self.id = id
            self.at = at
            self.actor = actor
            self.actorID = actorID
            self.action = action
            self.target = target
            self.source = source
            self.note = note
        }

        /// What the chain hashes: the wire form of the entry.
        public var contract: AuditEntry {
            AuditEntry(
                id: id, seq: seq, at: at, actor: actor, actorID: seq == nil ? nil : actorID, action: action, target: target,
                source: source, note: seq == nil ? nil : note, prevHash: prevHash, hash: hash
            )
        }
    }

    public static let maximumEntries = AuditChain.retainedEntries
    private let redis: RedisConnectionPool
    private let writer: AuditChainWriter

    public init(redis: RedisConnectionPool) {
        self.redis = redis
        self.writer = AuditChainWriter(redis: redis, maximumEntries: Self.maximumEntries)
    }

    /// Appends `entry` to the chain (its time cut to whole seconds, as the chain hashes it);
    /// the entry as written.
    @discardableResult
    public func append(_ entry: Entry) async throws -> Entry {
        var entry = entry
        entry.at = Date(timeIntervalSince1970: Double(AuditChain.unixSeconds(entry.at)))
        return try await writer.append(entry)
    }

    /// The newest `limit` entries, newest first.
    public func newest(_ limit: Int) async throws -> [Entry] {
        try await newest(limit, before: nil).entries
    }

    /// Up to `limit` entries older than the entry `before` (from the newest when nil), newest
    /// first, written within `window` when given; `more` tells whether older ones follow. A
    /// `before` that is not an entry id is refused with ``KeyRegistryError/Code/unknownCursor``.
    public func newest(_ limit: Int, before: String?, window: AuditWindow = AuditWindow()) async throws -> (entries: [Entry], more: Bool) {
        var end = window.endID
        if let before {
            guard let id = Self.entryID(before) else { throw KeyRegistryError(.unknownCursor, "\(before) is not an audit entry id") }
            // Nothing is older than the first possible id (and Redis refuses `(0-0`).
            if id == (0, 0) { return ([], false) }
            end = "(" + before
        }
        if window.isEmpty { return ([], false) }
        let reply = try await redis.send(.xrevrange(RegistryKeys.audit, end: end, start: window.startID, count: limit + 1))
        return Self.page(reply, limit: limit)
    }

    /// Up to `limit` entries newer than the entry `after` (from the oldest when nil), oldest
    /// first, written within `window`: what an export or a chain check walks.
    public func oldest(_ limit: Int, after: String?, window: AuditWindow = AuditWindow()) async throws -> (entries: [Entry], more: Bool) {
        var start = window.startID
        if let after {
            guard Self.entryID(after) != nil else { throw KeyRegistryError(.unknownCursor, "\(after) is not an audit entry id") }
            start = "(" + after
        }
        if window.isEmpty { return ([], false) }
        let reply = try await redis.send(.xrange(RegistryKeys.audit, start: start, end: window.endID, count: limit + 1))
        return Self.page(reply, limit: limit)
    }

    private static func page(_ reply: RedisValue, limit: Int) -> (entries: [Entry], more: Bool) {
        var entries: [Entry] = (reply.array ?? []).compactMap { item in
            guard let parts = item.array, parts.count == 2, let id = parts[0].string else { return nil }
            return entry(id: id, fields: KeyRegistry.hashFields(parts[1]))
        }
        let more = entries.count > limit
        if more { entries.removeLast() }
        return (entries, more)
    }

    static func entry(id: String, fields: [String: String]) -> Entry {
        var entry = Entry(
            id: id,
            at: KeyRegistry.date(fields["at"]) ?? Date(timeIntervalSince1970: 0),
            actor: fields["actor"] ?? "",
            actorID: fields["actor_id"] ?? "",
            action: fields["action"] ?? "",
            target: fields["target"] ?? "",
            source: fields["source"] ?? "",
            note: fields["note"] ?? ""
        )
        entry.seq = fields["seq"].flatMap { Int($0) }
        entry.prevHash = fields["prev"]
        entry.hash = fields["hash"]
        return entry
    }

    /// How many arguments ``fields(of:)`` makes: field names and values.
    static let fieldCount = 20

    /// The stream fields of a sealed entry.
    static func fields(of entry: Entry) -> [String] {
        [
            "at", KeyRegistry.timestamp(entry.at), "seq", String(entry.seq ?? 0), "actor_id", entry.actorID, "actor", entry.actor,
            "action", entry.action, "target", entry.target, "source", entry.source, "note", entry.note,
            "prev", entry.prevHash ?? "", "hash", entry.hash ?? "",
        ]
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
