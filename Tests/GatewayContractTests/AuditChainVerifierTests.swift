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

    static func verify(_ entries: [AuditEntry]) -> String? {
        var verifier = AuditChainVerifier()
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
