/// An entry of an audit trail known from outside Redis (`SEQ:HASH`, as `audit verify` prints
/// its head): the chain must still hold it. Anyone who can write to Redis can rewrite the
/// whole chain with valid hashes, or wipe it so it verifies as a new one; only a hash kept
/// elsewhere shows that.
public struct AuditAnchor: Sendable, Hashable, CustomStringConvertible {
    public let seq: Int
    public let hash: String

    public init(seq: Int, hash: String) {
        self.seq = seq
        self.hash = hash
    }

    /// `SEQ:HASH`: a positive entry number and a SHA-256 in lowercase hex; nil otherwise.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let seq = Int(parts[0]), seq > 0, parts[1].count == 64,
            parts[1].allSatisfy({ ("0"..."9").contains($0) || ("a"..."f").contains($0) })
        else { return nil }
        self.init(seq: seq, hash: String(parts[1]))
    }

    public var description: String { "\(seq):\(hash)" }
}
