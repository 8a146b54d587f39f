import Foundation
import GatewayContract

/// Reads the audit trail oldest first, a page of 1000 at a time: what `audit verify` checks
/// and `audit export` writes.
struct AuditWalk {
    let client: AdminClient
    var trail = AuditTrailOptions.Trail.actions

    /// Every entry from `from` to `to`, in order, to `body`.
    func each(from: Date? = nil, to: Date? = nil, _ body: (AuditEntry) throws -> Void) async throws {
        var after: String?
        repeat {
            let page = try await client.auditOldestFirst(
                try PageRequest(limit: String(PageRequest.maximumLimit), after: after, defaultLimit: PageRequest.maximumLimit),
                from: from, to: to, trail: trail
            )
            try page.items.forEach(body)
            after = page.nextCursor
        } while after != nil
    }

    func export(from: Date?, to: Date?, line: (String) -> Void) async throws {
        let encoder = AdminJSON.encoder()
        try await each(from: from, to: to) { entry in
            line(String(decoding: try encoder.encode(entry), as: UTF8.self))
        }
    }

    /// The chain checked from its first entry kept to its last; stops at the first problem.
    /// The trim record is read before and after the walk: a trim in between (the refusals
    /// trail can move fast) would look like a removal, so the walk is made again.
    func verify(anchor: AuditAnchor? = nil) async throws -> AuditVerification {
        var attempts = 0
        while true {
            attempts += 1
            let trimmed = try await client.auditTrimmed(trail: trail)
            var verifier = AuditChainVerifier(trimmed: trimmed, anchor: anchor)
            var problem: String?
            try await each { entry in
                if problem == nil { problem = verifier.check(entry) }
            }
            if try await client.auditTrimmed(trail: trail) != trimmed, attempts < 5 { continue }
            problem = problem ?? verifier.finish()
            return AuditVerification(
                status: problem == nil ? "intact" : "broken", problem: problem, summary: verifier.summary, entries: verifier.checked,
                trimmed: verifier.trimmedEntries, unchained: verifier.unchained, firstSeq: verifier.firstSeq, headSeq: verifier.headSeq,
                headHash: verifier.headHash
            )
        }
    }
}

/// What `audit verify` reports.
struct AuditVerification: Encodable, TableRepresentable {
    let status: String
    let problem: String?
    /// "N entries trimmed, chain verified from #X to #Y".
    let summary: String
    /// Chained entries checked (up to the problem, if any).
    let entries: Int
    /// Entries before the first one checked, trimmed by the trail's cap.
    let trimmed: Int
    /// Entries from before the chain, at its start.
    let unchained: Int
    let firstSeq: Int?
    let headSeq: Int?
    let headHash: String?

    enum CodingKeys: String, CodingKey {
        case status, problem, summary, entries, trimmed, unchained
        case firstSeq = "first_seq"
        case headSeq = "head_seq"
        case headHash = "head_hash"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        try container.encode(problem, forKey: .problem)
        try container.encode(summary, forKey: .summary)
        try container.encode(entries, forKey: .entries)
        try container.encode(trimmed, forKey: .trimmed)
        try container.encode(unchained, forKey: .unchained)
        try container.encode(firstSeq, forKey: .firstSeq)
        try container.encode(headSeq, forKey: .headSeq)
        try container.encode(headHash, forKey: .headHash)
    }

    /// Under the table: the head to keep for the next verify.
    var nextAnchorNote: [String] {
        guard let headSeq, let headHash else { return [] }
        return ["keep for the next verify: --anchor \(AuditAnchor(seq: headSeq, hash: headHash))"]
    }

    static let columns = ["STATUS", "ENTRIES", "TRIMMED", "FIRST SEQ", "HEAD SEQ", "HEAD HASH"]
    var cells: [String] {
        [status, String(entries), String(trimmed), firstSeq.map(String.init) ?? "-", headSeq.map(String.init) ?? "-", headHash ?? "-"]
    }
}
