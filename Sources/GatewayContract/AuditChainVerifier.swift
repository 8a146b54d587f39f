/// Walks a trail oldest first and names the first entry that breaks the chain: changed (its
/// hash does not match its content), removed (a gap in the sequence), or inserted (a repeated
/// or unchained entry, or one whose `prev_hash` is not its predecessor's hash).
///
/// Entries written before the chain existed (no `seq`) are accepted only before the first
/// chained one. A trail whose first chained entry is not #1 is accepted only when it holds
/// ``AuditChain/retainedEntries`` or more (the older ones were trimmed).
public struct AuditChainVerifier: Sendable {
    public private(set) var checked = 0
    public private(set) var unchained = 0
    public private(set) var firstSeq: Int?
    private var last: (seq: Int, id: String, hash: String)?
    /// The newest entry's hash: compare it with what an earlier export recorded.
    public var headHash: String? { last?.hash }
    public var headSeq: Int? { last?.seq }

    public init() {}

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
        guard let previous = last else {
            firstSeq = seq
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
            let missing = seq - previous.seq == 2 ? "entry #\(previous.seq + 1) was" : "entries #\(previous.seq + 1) to #\(seq - 1) were"
            return "\(missing) removed: entry #\(seq) (\(entry.id)) follows entry #\(previous.seq) (\(previous.id))"
        }
        guard entry.prevHash == previous.hash else {
            return "entry #\(seq) (\(entry.id)) does not follow entry #\(previous.seq) (\(previous.id)): one of them was replaced"
        }
        last = (seq, entry.id, stored)
        return nil
    }

    /// After the last entry: a problem with the trail as a whole, if any.
    public func finish() -> String? {
        if let firstSeq, firstSeq > 1, checked < AuditChain.retainedEntries {
            let missing = firstSeq == 2 ? "entry #1 was" : "entries #1 to #\(firstSeq - 1) were"
            return "\(missing) removed: the trail starts at entry #\(firstSeq) but holds only \(checked) chained entries"
        }
        return nil
    }
}
