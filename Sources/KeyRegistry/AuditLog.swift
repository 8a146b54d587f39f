import Foundation
import GatewayContract
import RedisClient

/// The append-only record of admin actions: two Redis streams, each a hash chain
/// (``GatewayContract/AuditChain``) whose entries carry their number, the previous entry's
/// hash and their own, so a changed, removed or inserted entry shows.
///
/// The actions trail holds what credentials did; the refusals trail the calls their role did
/// not allow (`access.refused`), which any credential can make by the thousand: apart, with a
/// cap each, a flood of refusals never pushes an action out. A trail past its cap loses its
/// oldest entries, recorded (``trimmed(_:)``) so a check tells them from entries removed.
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

    /// The admin actions, or the refused attempts (`access.refused`).
    public enum Trail: String, Sendable, CaseIterable {
        case actions
        case refusals

        var stream: String { self == .actions ? RegistryKeys.audit : RegistryKeys.auditRefusals }
    }

    /// The action of an entry that goes to the refusals trail.
    public static let refusedAction = "access.refused"
    public static let maximumEntries = AuditChain.retainedEntries
    /// A refusal says less than an action and comes cheaper: a tenth as many are kept.
    public static let maximumRefusals = AuditChain.retainedEntries / 10
    private let redis: RedisConnectionPool
    private let actions: AuditChainWriter
    private let refusals: AuditChainWriter

    public init(redis: RedisConnectionPool, maximumActions: Int = Self.maximumEntries, maximumRefusals: Int = Self.maximumRefusals) {
        self.redis = redis
        self.actions = AuditChainWriter(redis: redis, stream: Trail.actions.stream, maximumEntries: maximumActions)
        self.refusals = AuditChainWriter(redis: redis, stream: Trail.refusals.stream, maximumEntries: maximumRefusals)
    }

    /// What the cap trimmed from the start of `trail`; nil when nothing was.
    public func trimmed(_ trail: Trail) async throws -> AuditTrim? {
        let fields = KeyRegistry.hashFields(try await redis.send(.hgetall(RegistryKeys.auditTrimmed(trail.stream))))
        guard let entries = fields["entries"].flatMap({ Int($0) }) else { return nil }
        return AuditTrim(entries: entries, lastSeq: fields["seq"].flatMap { Int($0) } ?? 0, lastHash: fields["hash"] ?? "")
    }

    /// Appends `entry` to its trail's chain (its time cut to whole seconds, as the chain
    /// hashes it); the entry as written. An entry a partner's member wrote (`partnerID`) is
    /// also listed among the partner's own (``partnerEntries(_:limit:before:)``), after it is
    /// in the chain.
    @discardableResult
    public func append(_ entry: Entry, partnerID: String? = nil) async throws -> Entry {
        var entry = entry
        entry.at = Date(timeIntervalSince1970: Double(AuditChain.unixSeconds(entry.at)))
        let trail: Trail = entry.action == Self.refusedAction ? .refusals : .actions
        let written = try await (trail == .refusals ? refusals : actions).append(entry)
        if let partnerID {
            _ = try await redis.run(
                AuditScripts.indexForPartner, keys: [RegistryKeys.partnerAudit(partnerID)],
                arguments: [String(Self.entryID(written.id)?.0 ?? 0), "\(trail.rawValue):\(written.id)", String(Self.maximumPartnerEntries)]
            )
        }
        return written
    }

    /// How many of its own entries a partner's index keeps (its oldest go first).
    public static let maximumPartnerEntries = 10_000

    /// Up to `limit` of the partner's own entries (what its members did and tried, from both
    /// trails), newest first, older than the entry `before` (`<trail>:<id>`, an earlier page's
    /// cursor); `next` is the cursor of the page after, nil on the last. An entry trimmed from
    /// its trail since is left out.
    public func partnerEntries(_ partnerID: String, limit: Int, before: String?) async throws -> (entries: [Entry], next: String?) {
        let index = RegistryKeys.partnerAudit(partnerID)
        var start = 0
        if let before {
            guard let rank = try await redis.send(.zrevrank(index, before)).int else {
                throw KeyRegistryError(.unknownCursor, "no entry \(before) to continue after")
            }
            start = Int(rank) + 1
        }
        var names = try await redis.send(.zrange(index, start, start + limit, reversed: true)).array?.compactMap(\.string) ?? []
        let more = names.count > limit
        if more { names.removeLast() }
        let located: [(trail: Trail, id: String)] = names.compactMap { name in
            let parts = name.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let trail = Trail(rawValue: String(parts[0])), Self.entryID(String(parts[1])) != nil else { return nil }
            return (trail, String(parts[1]))
        }
        let next = more ? names.last : nil
        guard !located.isEmpty else { return ([], next) }
        let replies = try await redis.pipeline(located.map { .xrange($0.trail.stream, start: $0.id, end: $0.id, count: 1) })
        let entries: [Entry] = replies.compactMap { reply in
            guard let item = reply.array?.first?.array, item.count == 2, let id = item[0].string else { return nil }
            return Self.entry(id: id, fields: KeyRegistry.hashFields(item[1]))
        }
        return (entries, next)
    }

    /// The newest `limit` entries of `trail`, newest first.
    public func newest(_ limit: Int, trail: Trail = .actions) async throws -> [Entry] {
        try await newest(limit, before: nil, trail: trail).entries
    }

    /// Up to `limit` entries older than the entry `before` (from the newest when nil), newest
    /// first, written within `window` when given; `more` tells whether older ones follow. A
    /// `before` that is not an entry id is refused with ``KeyRegistryError/Code/unknownCursor``.
    public func newest(_ limit: Int, before: String?, window: AuditWindow = AuditWindow(), trail: Trail = .actions) async throws -> (entries: [Entry], more: Bool) {
        var end = window.endID
        if let before {
            guard let id = Self.entryID(before) else { throw KeyRegistryError(.unknownCursor, "\(before) is not an audit entry id") }
            // Nothing is older than the first possible id (and Redis refuses `(0-0`).
            if id == (0, 0) { return ([], false) }
            end = "(" + before
        }
        if window.isEmpty { return ([], false) }
        let reply = try await redis.send(.xrevrange(trail.stream, end: end, start: window.startID, count: limit + 1))
        return Self.page(reply, limit: limit)
    }

    /// Up to `limit` entries newer than the entry `after` (from the oldest when nil), oldest
    /// first, written within `window`: what an export or a chain check walks.
    public func oldest(_ limit: Int, after: String?, window: AuditWindow = AuditWindow(), trail: Trail = .actions) async throws -> (entries: [Entry], more: Bool) {
        var start = window.startID
        if let after {
            guard let id = Self.entryID(after) else { throw KeyRegistryError(.unknownCursor, "\(after) is not an audit entry id") }
            // Nothing is newer than the last possible id (and Redis refuses to go past it).
            if id == (UInt64.max, UInt64.max) { return ([], false) }
            start = "(" + after
        }
        if window.isEmpty { return ([], false) }
        let reply = try await redis.send(.xrange(trail.stream, start: start, end: window.endID, count: limit + 1))
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
