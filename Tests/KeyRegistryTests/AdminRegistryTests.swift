import Foundation
import GatewayContract
@testable import KeyRegistry
import RedisClient
import Testing
import TestSupport

@Suite("Admin credentials and the audit chain against a real redis-server", .realProcesses)
struct AdminRegistryTests {
    @Test func credentialsAreHashedRotatedAndRevoked() async throws {
        let fixture = try await KeyRegistryTests.Fixture(cluster: true)
        let admins = AdminRegistry(redis: fixture.redis)
        let (secret, record) = try await admins.create(name: "asha", role: .support, expiresIn: .seconds(3600), createdBy: "root")
        #expect(secret.text.hasPrefix("pga_live_") && AdminSecret(secret.text) != nil)
        #expect(APIKey(secret.text) == nil && AdminSecret(APIKey.generate().text) == nil)
        #expect(record.start == secret.start && record.tokenHash == secret.hash)
        #expect(try await admins.record(for: secret) == record)
        // Only the hash is stored.
        let dump = try await fixture.server.cli("HGETALL", "pg:admin:{\(record.id)}")
        #expect(!dump.contains(secret.text))

        let (rotated, after) = try await admins.rotate(id: record.id, expiresIn: nil)
        #expect(after.expiresAt == record.expiresAt && after.id == record.id)
        #expect(try await admins.record(for: secret) == nil, "the old secret stops at once")
        #expect(try await admins.record(for: rotated)?.id == record.id)

        let revoked = try await admins.revoke(id: record.id)
        #expect(revoked.status(at: Date()) == .revoked)
        #expect(try await admins.record(for: rotated)?.status(at: Date()) == .revoked)
        await #expect(throws: KeyRegistryError(.adminNotActive, "admin \(record.id) is already revoked")) { try await admins.revoke(id: record.id) }
        await #expect(throws: KeyRegistryError.self) { try await admins.rotate(id: record.id, expiresIn: nil) }
        await #expect(throws: KeyRegistryError(.adminNotFound, "no admin adm_0000000000000000")) { try await admins.revoke(id: "adm_0000000000000000") }

        let (_, expiring) = try await admins.create(name: "ravi", role: .auditor, expiresIn: .seconds(60), createdBy: record.id)
        #expect(expiring.status(at: Date().addingTimeInterval(61)) == .expired)
        let (listed, more) = try await admins.list(after: nil, limit: 1)
        #expect(listed.map(\.id) == [record.id] && more)
        #expect(try await admins.list(after: record.id, limit: 5).records.map(\.id) == [expiring.id])
    }

    /// Two instances (two pools, two writers) append concurrently on a Redis Cluster node:
    /// one chain, every entry once, in a gapless sequence.
    @Test func concurrentWritersShareOneChain() async throws {
        let fixture = try await KeyRegistryTests.Fixture(cluster: true)
        let other = RedisConnectionPool(configuration: RedisConfiguration(url: try RedisURL(fixture.server.url), poolSize: 2, timeout: .seconds(5)))
        let logs = [AuditLog(redis: fixture.redis), AuditLog(redis: other)]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<400 {
                group.addTask {
                    try await logs[index % 2].append(.init(at: Date(), actor: "w\(index % 2)", actorID: "adm_\(index % 2)", action: "test", target: "t\(index)", source: "s"))
                }
            }
            try await group.waitForAll()
        }
        let (entries, more) = try await logs[0].oldest(1000, after: nil)
        #expect(!more && entries.count == 400)
        #expect(entries.map(\.seq) == (1...400).map { Optional($0) })
        #expect(Set(entries.map(\.target)).count == 400)
        var verifier = AuditChainVerifier()
        for entry in entries { #expect(verifier.check(entry.contract) == nil) }
        #expect(verifier.finish() == nil && verifier.checked == 400)

        // The window and the cursor of an oldest-first walk.
        let (firstTwo, _) = try await logs[0].oldest(2, after: nil)
        let (next, _) = try await logs[0].oldest(2, after: firstTwo[1].id)
        #expect(next.first?.seq == 3)
        #expect(try await logs[0].oldest(10, after: nil, window: AuditWindow(to: Date(timeIntervalSince1970: 1))).entries.isEmpty)
    }

    /// Refused attempts, which any credential can cause by the thousand, have a trail and a
    /// cap of their own: a flood of them never pushes an action out. What a cap trims is
    /// recorded, so a check tells it from entries removed behind the gateway's back.
    @Test func refusalsNeverEvictActionsAndTrimmingIsRecorded() async throws {
        let fixture = try await KeyRegistryTests.Fixture(cluster: true)
        let log = AuditLog(redis: fixture.redis, maximumActions: 20, maximumRefusals: 50)
        func action(_ index: Int) async throws {
            try await log.append(.init(at: Date(), actor: "asha", actorID: "adm_1", action: "key.revoke", target: "key_\(index)", source: "s"))
        }
        for index in 0..<5 { try await action(index) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<400 {
                group.addTask {
                    try await log.append(.init(at: Date(), actor: "ravi", actorID: "adm_2", action: "access.refused", target: "POST /v1/x\(index)", source: "s"))
                }
            }
            try await group.waitForAll()
        }
        let actions = try await log.oldest(1000, after: nil).entries
        #expect(actions.map(\.target) == (0..<5).map { "key_\($0)" })
        #expect(try await log.trimmed(.actions) == nil)

        let refusals = try await log.oldest(1000, after: nil, trail: .refusals).entries
        #expect(refusals.count == 50 && refusals.allSatisfy { $0.action == "access.refused" })
        let trim = try #require(try await log.trimmed(.refusals))
        #expect(trim.entries == 350 && trim.lastSeq == 350)
        #expect(refusals.first?.seq == 351 && refusals.first?.prevHash == trim.lastHash)
        var verifier = AuditChainVerifier(trimmed: trim)
        for entry in refusals { #expect(verifier.check(entry.contract) == nil) }
        #expect(verifier.finish() == nil)

        // Actions past their own cap are trimmed oldest first, and recorded the same way.
        for index in 5..<30 { try await action(index) }
        let kept = try await log.oldest(1000, after: nil).entries
        #expect(kept.map(\.target) == (10..<30).map { "key_\($0)" })
        #expect(try await log.trimmed(.actions) == AuditTrim(entries: 10, lastSeq: 10, lastHash: kept[0].prevHash ?? ""))
    }

    @Test func entriesBeforeTheChainAreItsAnchor() async throws {
        let fixture = try await KeyRegistryTests.Fixture()
        _ = try await fixture.server.cli("XADD", "pg:audit", "*", "at", "1", "actor", "alice@ops", "action", "key.create", "target", "key_1", "source", "s")
        let log = AuditLog(redis: fixture.redis)
        let written = try await log.append(.init(at: Date(), actor: "root", actorID: "root", action: "key.revoke", target: "key_1", source: "s"))
        #expect(written.seq == 1 && written.prevHash == "")
        var verifier = AuditChainVerifier()
        for entry in try await log.oldest(10, after: nil).entries { #expect(verifier.check(entry.contract) == nil) }
        #expect(verifier.unchained == 1 && verifier.checked == 1)
    }
}
