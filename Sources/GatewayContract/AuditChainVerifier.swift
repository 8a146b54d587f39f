/// Walks a trail oldest first and names the first entry that breaks the chain: changed (its
/// hash does not match its content), removed (a gap in the sequence), or inserted (a repeated
/// or unchained entry, or one whose `prev_hash` is not its predecessor's hash).
///
/// Entries written before the chain existed (no `seq`) are accepted only before the first
/// chained one. A trail whose first chained entry is not #1 must start right after what the
/// gateway recorded trimming (``AuditTrim``), following its last hash; without a record
/// (trails trimmed before records were kept) it is accepted only when it holds
/// ``AuditChain/retainedEntries`` or more.
///
/// With an ``AuditAnchor``, the trail must still hold that entry with that hash, or have
/// recorded trimming exactly up to it: a chain rewritten or wiped is caught only that way.
public struct AuditChainVerifier: Sendable {
    public private(set) var checked = 0
    public private(set) var unchained = 0
    public private(set) var firstSeq: Int?
    private var first: (seq: Int, id: String, prevHash: String)?
    private var last: (seq: Int, id: String, hash: String)?
    /// The newest entry's hash: compare it with what an earlier export recorded.
    public var headHash: String? { last?.hash }
    public var headSeq: Int? { last?.seq }
    /// What the gateway recorded trimming from the trail's start, if anything.
    public let trimmed: AuditTrim?
    public let anchor: AuditAnchor?
    /// Whether the walk reached the anchor and found it as it was.
    public private(set) var anchorHeld = false

    public init(trimmed: AuditTrim? = nil, anchor: AuditAnchor? = nil) {
        self.trimmed = trimmed.flatMap { $0.entries > 0 ? $0 : nil }
        self.anchor = anchor
    }

    /// How many entries went before the first one checked: the record's count, or, for a
    /// trail trimmed before records were kept, the chained ones missing at its start.
    public var trimmedEntries: Int {
        trimmed?.entries ?? max(0, (firstSeq ?? 1) - 1)
    }

    /// What the walk verified, in words.
    public var summary: String {
        guard let firstSeq, let last else { return "no chained entries" }
        let verified = "chain verified from #\(firstSeq) to #\(last.seq)" + (anchorHeld ? ", holding anchor #\(anchor!.seq)" : "")
        switch trimmedEntries {
        case 0: return verified
        case 1: return "1 entry trimmed, \(verified)"
        case let count: return "\(count) entries trimmed, \(verified)"
        }
    }

    /// Checks the next entry (oldest first); the problem it shows, if any.
    public mutating func check(_ entry: AuditEntry) -> String? {
        guard let seq = entry.seq, let stored = entry.hash else {
            if last != nil {
                return "entry \(entry.id) has no chain fields after chained entry #\(last!.seq): it was inserted or changed"
            }
            unchained += 1
            return nil
        }
        checked += 1
        guard AuditChain.hash(of: entry) == stored else {
            return "entry #\(seq) (\(entry.id)) was changed: its content does not match its hash"
        }
        if let anchor, anchor.seq == seq {
            guard anchor.hash == stored else {
                return "entry #\(seq) (\(entry.id)) is not the anchor: its hash differs, so the trail was rewritten from it or before"
            }
            anchorHeld = true
        }
        guard let previous = last else {
            firstSeq = seq
            first = (seq, entry.id, entry.prevHash ?? "")
            if seq == 1, entry.prevHash ?? "" != "" {
                return "entry #1 (\(entry.id)) names a previous entry: the start of the trail was replaced"
            }
            last = (seq, entry.id, stored)
            return nil
        }
        if seq <= previous.seq {
            return "entry #\(seq) (\(entry.id)) was inserted: it follows entry #\(previous.seq) (\(previous.id))"
        }
        if seq > previous.seq + 1 {
            return "\(Self.missing(previous.seq + 1, seq - 1)) removed: entry #\(seq) (\(entry.id)) follows entry #\(previous.seq) (\(previous.id))"
        }
        guard entry.prevHash == previous.hash else {
            return "entry #\(seq) (\(entry.id)) does not follow entry #\(previous.seq) (\(previous.id)): one of them was replaced"
        }
        last = (seq, entry.id, stored)
        return nil
    }

    /// After the last entry: a problem with the trail as a whole, if any.
    public func finish() -> String? {
        trimProblem() ?? anchorProblem()
    }

    private func trimProblem() -> String? {
        guard let first, first.seq > 1 else { return nil }
        guard let trimmed else {
            if checked < AuditChain.retainedEntries {
                return "\(Self.missing(1, first.seq - 1)) removed: the trail starts at entry #\(first.seq) but holds only \(checked) chained entries"
            }
            return nil
        }
        if first.seq > trimmed.lastSeq + 1 {
            return "\(Self.missing(trimmed.lastSeq + 1, first.seq - 1)) removed: the trail starts at entry #\(first.seq), and the gateway trimmed entries up to #\(trimmed.lastSeq) only"
        }
        if first.seq <= trimmed.lastSeq {
            return "entry #\(first.seq) (\(first.id)) is still in the trail, but the gateway recorded trimming up to #\(trimmed.lastSeq): the record or the trail was changed"
        }
        if first.prevHash != trimmed.lastHash {
            return "entry #\(first.seq) (\(first.id)) does not follow the last trimmed entry #\(trimmed.lastSeq): one of them was replaced"
        }
        return nil
    }

    /// The anchor neither walked past nor recorded as the last entry trimmed.
    private func anchorProblem() -> String? {
        guard let anchor, !anchorHeld else { return nil }
        if let trimmed, trimmed.lastSeq == anchor.seq {
            return trimmed.lastHash == anchor.hash
                ? nil : "the last trimmed entry #\(anchor.seq) is not the anchor: its hash differs, so the trail was rewritten from it or before"
        }
        guard let first, let last else {
            return "the trail holds no chained entries, but the anchor is entry #\(anchor.seq): the trail was wiped"
        }
        if anchor.seq > last.seq {
            return "the trail ends at entry #\(last.seq), before the anchor #\(anchor.seq): it was wiped or cut short"
        }
        return "the anchor #\(anchor.seq) is no longer in the trail, which starts at entry #\(first.seq): verify with a newer anchor"
    }

    /// "entry #3 was" or "entries #3 to #5 were".
    private static func missing(_ from: Int, _ to: Int) -> String {
        from == to ? "entry #\(from) was" : "entries #\(from) to #\(to) were"
    }
}
