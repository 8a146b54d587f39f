import Foundation
import GatewayContract
import Testing

/// The chain check `gatewayctl audit verify` runs, on trails built in memory.
@Suite struct AuditChainVerifierTests {
    static func chain(_ count: Int) -> [AuditEntry] {
        var entries: [AuditEntry] = []
        var previous = ""
        for seq in 1...count {
            let at = Date(timeIntervalSince1970: Double(1_795_000_000 + seq))
            let hash = AuditChain.hash(seq: seq, at: at, actorID: "adm_1", actor: "asha", action: "key.revoke", target: "key_\(seq)", source: "10.0.0.1", note: "", prevHash: previous)
            entries.append(AuditEntry(id: "\(seq)-0", seq: seq, at: at, actor: "asha", actorID: "adm_1", action: "key.revoke", target: "key_\(seq)", source: "10.0.0.1", note: "", prevHash: previous, hash: hash))
            previous = hash
        }
        return entries
    }

    static func verify(_ entries: [AuditEntry], trimmed: AuditTrim? = nil, anchor: AuditAnchor? = nil) -> String? {
        var verifier = AuditChainVerifier(trimmed: trimmed, anchor: anchor)
        for entry in entries {
            if let problem = verifier.check(entry) { return problem }
        }
        return verifier.finish()
    }

    @Test func anIntactChainPasses() {
        #expect(Self.verify(Self.chain(10)) == nil)
    }

    @Test func aChangedEntryIsNamed() {
        var entries = Self.chain(10)
        let original = entries[4]
        entries[4] = AuditEntry(id: original.id, seq: 5, at: original.at, actor: "someone-else", actorID: original.actorID, action: original.action,
                                target: original.target, source: original.source, note: original.note, prevHash: original.prevHash, hash: original.hash)
        #expect(Self.verify(entries)?.hasPrefix("entry #5 (5-0) was changed") == true)
    }

    @Test func aChangedEntryWithItsHashRecomputedIsCaughtByItsSuccessor() {
        var entries = Self.chain(10)
        let original = entries[4]
        let forged = AuditChain.hash(seq: 5, at: original.at, actorID: "adm_1", actor: "asha", action: "key.create", target: original.target,
                                     source: original.source, note: "", prevHash: original.prevHash ?? "")
        entries[4] = AuditEntry(id: original.id, seq: 5, at: original.at, actor: "asha", actorID: "adm_1", action: "key.create", target: original.target,
                                source: original.source, note: "", prevHash: original.prevHash, hash: forged)
        #expect(Self.verify(entries)?.hasPrefix("entry #6 (6-0) does not follow entry #5 (5-0)") == true)
    }

    @Test func removedEntriesAreNamed() {
        var entries = Self.chain(10)
        entries.remove(at: 6)
        #expect(Self.verify(entries)?.hasPrefix("entry #7 was removed") == true)
        entries = Self.chain(10)
        entries.removeFirst(2)
        #expect(Self.verify(entries)?.hasPrefix("entries #1 to #2 were removed") == true)
    }

    /// A trail the gateway trimmed verifies from its first entry kept, which must follow the
    /// recorded last trimmed entry; anything missing beyond the record is named.
    @Test func aRecordedTrimIsReportedAndItsEdgeChecked() {
        let chain = Self.chain(10)
        let kept = Array(chain.dropFirst(3))
        var verifier = AuditChainVerifier(trimmed: AuditTrim(entries: 3, lastSeq: 3, lastHash: chain[2].hash ?? ""))
        for entry in kept { #expect(verifier.check(entry) == nil) }
        #expect(verifier.finish() == nil)
        #expect(verifier.summary == "3 entries trimmed, chain verified from #4 to #10")

        var short = AuditChainVerifier(trimmed: AuditTrim(entries: 2, lastSeq: 2, lastHash: chain[1].hash ?? ""))
        for entry in kept { _ = short.check(entry) }
        #expect(short.finish() == "entry #3 was removed: the trail starts at entry #4, and the gateway trimmed entries up to #2 only")

        var forged = AuditChainVerifier(trimmed: AuditTrim(entries: 3, lastSeq: 3, lastHash: chain[1].hash ?? ""))
        for entry in kept { _ = forged.check(entry) }
        #expect(forged.finish() == "entry #4 (4-0) does not follow the last trimmed entry #3: one of them was replaced")

        var untrimmed = AuditChainVerifier()
        for entry in chain { _ = untrimmed.check(entry) }
        #expect(untrimmed.summary == "chain verified from #1 to #10")
    }

    /// A whole chain rewritten with valid hashes, or wiped and begun again, verifies on its
    /// own; an anchor kept from an earlier verify catches both.
    @Test func anAnchorCatchesARewrittenOrWipedChain() throws {
        let chain = Self.chain(10)
        let anchor = AuditAnchor(seq: 6, hash: try #require(chain[5].hash))
        var verifier = AuditChainVerifier(anchor: anchor)
        for entry in chain { #expect(verifier.check(entry) == nil) }
        #expect(verifier.finish() == nil)
        #expect(verifier.summary == "chain verified from #1 to #10, holding anchor #6")

        // The same trail begun again by someone who can write to Redis: a valid chain.
        let rewritten = Self.chain(12).map { entry in
            let at = entry.at.addingTimeInterval(1)
            return AuditEntry(id: entry.id, seq: entry.seq, at: at, actor: entry.actor, actorID: entry.actorID, action: entry.action, target: entry.target,
                              source: entry.source, note: entry.note, prevHash: entry.prevHash, hash: entry.hash)
        }
        #expect(Self.verify(Self.chain(3)) == nil && Self.verify([]) == nil, "without an anchor a new chain verifies")
        #expect(Self.verify(Self.chain(3), anchor: anchor) == "the trail ends at entry #3, before the anchor #6: it was wiped or cut short")
        #expect(Self.verify([], anchor: anchor) == "the trail holds no chained entries, but the anchor is entry #6: the trail was wiped")
        let forged = Self.rechained(rewritten)
        #expect(Self.verify(forged) == nil)
        #expect(Self.verify(forged, anchor: anchor) == "entry #6 (6-0) is not the anchor: its hash differs, so the trail was rewritten from it or before")

        // Trimmed: exactly up to the anchor is fine; past it, a newer anchor is needed.
        #expect(Self.verify(Array(chain.dropFirst(6)), trimmed: AuditTrim(entries: 6, lastSeq: 6, lastHash: anchor.hash), anchor: anchor) == nil)
        #expect(Self.verify(Array(chain.dropFirst(7)), trimmed: AuditTrim(entries: 7, lastSeq: 7, lastHash: try #require(chain[6].hash)), anchor: anchor)
            == "the anchor #6 is no longer in the trail, which starts at entry #8: verify with a newer anchor")
    }

    @Test(arguments: [
        ("6:" + String(repeating: "a", count: 64), true), ("0:" + String(repeating: "a", count: 64), false),
        ("6:" + String(repeating: "A", count: 64), false), ("6:abc", false), ("6", false), ("x:" + String(repeating: "a", count: 64), false),
        ("6:" + String(repeating: "a", count: 64) + ":1", false),
    ])
    func anAnchorIsSeqColonHash(_ text: String, _ valid: Bool) {
        #expect((AuditAnchor(text) != nil) == valid)
        if valid { #expect(AuditAnchor(text)?.description == text) }
    }

    /// The entries' hashes computed again from their fields, each following the one before:
    /// what a forger with write access to Redis can do.
    static func rechained(_ entries: [AuditEntry]) -> [AuditEntry] {
        var previous = ""
        return entries.map { entry in
            let hash = AuditChain.hash(seq: entry.seq ?? 0, at: entry.at, actorID: entry.actorID ?? "", actor: entry.actor, action: entry.action,
                                       target: entry.target, source: entry.source, note: entry.note ?? "", prevHash: previous)
            defer { previous = hash }
            return AuditEntry(id: entry.id, seq: entry.seq, at: entry.at, actor: entry.actor, actorID: entry.actorID, action: entry.action,
                              target: entry.target, source: entry.source, note: entry.note, prevHash: previous, hash: hash)
        }
    }

    @Test func insertedEntriesAreNamed() {
        var entries = Self.chain(10)
        entries.insert(entries[2], at: 5)
        #expect(Self.verify(entries)?.contains("(3-0) was inserted") == true)
        entries = Self.chain(10)
        entries.insert(AuditEntry(id: "x-0", at: Date(), actor: "root", action: "key.create", target: "k", source: "s"), at: 5)
        #expect(Self.verify(entries)?.hasPrefix("entry x-0 has no chain fields") == true)
    }

    @Test func theWireFormKeepsAbsentFieldsAsNull() throws {
        let legacy = AuditEntry(id: "1-0", at: Date(timeIntervalSince1970: 1_795_000_000), actor: "alice@ops", action: "key.create", target: "key_1", source: "s")
        let json = try #require(try JSONSerialization.jsonObject(with: try AdminJSON.encoder().encode(legacy)) as? [String: Any])
        #expect(Set(json.keys) == ["id", "seq", "at", "actor", "actor_id", "action", "target", "source", "note", "prev_hash", "hash"])
        #expect(json["hash"] is NSNull && json["seq"] is NSNull)
        let chained = Self.chain(1)[0]
        #expect(try AdminJSON.decoder().decode(AuditEntry.self, from: try AdminJSON.encoder().encode(chained)) == chained)
    }
}
