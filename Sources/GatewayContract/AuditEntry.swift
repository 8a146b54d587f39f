import Foundation

/// One entry of the audit trail: who (a credential) did what, to what, when and from where,
/// chained to the entry before it (``AuditChain``).
public struct AuditEntry: Codable, Sendable, Hashable {
    /// The entry's position in the log (a Redis stream id), usable as a pagination cursor.
    public let id: String
    /// The entry's number in the chain, from 1; nil for entries written before the chain.
    public let seq: Int?
    /// Whole seconds: the chain hashes them as Unix seconds.
    public let at: Date
    /// The credential's name (`root` for the break-glass `GATEWAY_ADMIN_TOKEN`).
    public let actor: String
    /// The credential's id (`adm_...`, or `root`); nil for entries written before credentials.
    public let actorID: String?
    /// `partner.create`, `key.revoke`, `access.refused`, ...
    public let action: String
    /// The id acted on (for `access.refused`, the method and path refused).
    public let target: String
    /// The caller's address.
    public let source: String
    /// Free text the caller sent in `X-Admin-Actor`; it decides nothing.
    public let note: String?
    /// The previous entry's ``hash`` (empty for the first entry of the chain).
    public let prevHash: String?
    /// SHA-256 of this entry's canonical form (``AuditChain/hash(of:)``), lowercase hex.
    public let hash: String?

    public init(
        id: String, seq: Int? = nil, at: Date, actor: String, actorID: String? = nil, action: String, target: String,
        source: String, note: String? = nil, prevHash: String? = nil, hash: String? = nil
    ) {
        self.id = id
        self.seq = seq
        self.at = at
        self.actor = actor
        self.actorID = actorID
        self.action = action
        self.target = target
        self.source = source
        self.note = note
        self.prevHash = prevHash
        self.hash = hash
    }

    enum CodingKeys: String, CodingKey {
        case id, seq, at, actor, action, target, source, note, hash
        case actorID = "actor_id"
        case prevHash = "prev_hash"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        seq = try container.decodeIfPresent(Int.self, forKey: .seq)
        at = try container.decode(Date.self, forKey: .at)
        actor = try container.decode(String.self, forKey: .actor)
        actorID = try container.decodeIfPresent(String.self, forKey: .actorID)
        action = try container.decode(String.self, forKey: .action)
        target = try container.decode(String.self, forKey: .target)
        source = try container.decode(String.self, forKey: .source)
        note = try container.decodeIfPresent(String.self, forKey: .note)
        prevHash = try container.decodeIfPresent(String.self, forKey: .prevHash)
        hash = try container.decodeIfPresent(String.self, forKey: .hash)
    }

    // Written out so absent values are `null` rather than missing keys.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(seq, forKey: .seq)
        try container.encode(at, forKey: .at)
        try container.encode(actor, forKey: .actor)
        try container.encode(actorID, forKey: .actorID)
        try container.encode(action, forKey: .action)
        try container.encode(target, forKey: .target)
        try container.encode(source, forKey: .source)
        try container.encode(note, forKey: .note)
        try container.encode(prevHash, forKey: .prevHash)
        try container.encode(hash, forKey: .hash)
    }
}
