import Crypto
import Foundation

/// The audit trail's hash chain: what an entry's hash covers, and the walk that checks a
/// trail, shared by the gateway (which writes the hashes) and `gatewayctl audit verify`
/// (which recomputes them from what the admin API returns).
///
/// The canonical form is a version tag, then each field as `\n<UTF-8 length>:<value>`, in this
/// order: seq, at (Unix seconds), actor_id, actor, action, target, source, note, prev_hash.
/// Length prefixes make it unambiguous whatever the fields contain.
public enum AuditChain {
    /// About how many entries the trail keeps (older ones are trimmed, oldest first).
    public static let retainedEntries = 1_000_000
    static let version = "pg-audit-v1"

    /// SHA-256 of the canonical form, lowercase hex.
    public static func hash(
        seq: Int, at: Date, actorID: String, actor: String, action: String, target: String, source: String,
        note: String, prevHash: String
    ) -> String {
        var text = version
        for field in [String(seq), String(unixSeconds(at)), actorID, actor, action, target, source, note, prevHash] {
            text += "\n\(field.utf8.count):\(field)"
        }
        return SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// The hash `entry` should carry given its fields; nil for an entry without a chain
    /// position (written before the chain).
    public static func hash(of entry: AuditEntry) -> String? {
        guard let seq = entry.seq else { return nil }
        return hash(
            seq: seq, at: entry.at, actorID: entry.actorID ?? "", actor: entry.actor, action: entry.action,
            target: entry.target, source: entry.source, note: entry.note ?? "", prevHash: entry.prevHash ?? ""
        )
    }

    /// Times are chained as whole Unix seconds (what the admin API shows).
    public static func unixSeconds(_ date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down))
    }
}
