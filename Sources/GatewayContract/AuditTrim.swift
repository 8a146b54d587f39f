/// What the gateway trimmed from the start of an audit trail to keep it within its cap
/// (`GET /v1/audit/trimmed`): how many chained entries, and the last one's number and hash,
/// which the first entry kept must follow.
public struct AuditTrim: Codable, Sendable, Hashable {
    public let entries: Int
    public let lastSeq: Int
    public let lastHash: String

    public init(entries: Int, lastSeq: Int, lastHash: String) {
        self.entries = entries
        self.lastSeq = lastSeq
        self.lastHash = lastHash
    }

    enum CodingKeys: String, CodingKey {
        case entries
        case lastSeq = "last_seq"
        case lastHash = "last_hash"
    }
}
