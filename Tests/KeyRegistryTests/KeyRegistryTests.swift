import Foundation
@testable import KeyRegistry
import RedisClient
import Synchronization
import Testing
import TestSupport

@Suite("Key registry against a real redis-server", .timingSensitive)
struct KeyRegistryTests {
    struct Fixture {
        let server: RedisServer
        let redis: RedisConnectionPool
        let registry: KeyRegistry

        /// - Parameter cluster: Redis in cluster mode with one node holding every slot, which
        ///   refuses any command or script whose keys span two slots (`CROSSSLOT`).
        init(cluster: Bool = false) async throws {
            server = try await RedisServer(
                extraArguments: cluster ? ["--cluster-enabled", "yes", "--cluster-port", String(LoopbackPort.free())] : [])
            if cluster {
                let server = server
                try await server.cli("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
                try await eventually(timeout: .seconds(10), interval: .milliseconds(50)) {
                    try await server.cli("CLUSTER", "INFO").contains("cluster_state:ok")
                }
            }
            redis = RedisConnectionPool(configuration: RedisConfiguration(url: try RedisURL(server.url), poolSize: 2, timeout: .seconds(5)))
            registry = KeyRegistry(redis: redis)
        }

        /// A second gateway instance: its own pool, verifier and invalidation subscriber.
        func instance() throws -> (KeyVerifier, RedisSubscriber, RedisConnectionPool) {
            let configuration = RedisConfiguration(url: try RedisURL(server.url), poolSize: 2, timeout: .seconds(5))
            let pool = RedisConnectionPool(configuration: configuration)
            let verifier = KeyVerifier(registry: KeyRegistry(redis: pool), cacheLifetime: .seconds(60))
            let subscriber = RedisSubscriber(
                configuration: configuration,
                channels: [KeyRegistry.invalidationChannel],
                onReset: { verifier.reset() },
                onMessage: { _, message in verifier.invalidate(message) }
            )
            return (verifier, subscriber, pool)
        }

        /// Every key name and value in Redis, for leak scans.
        func everything() async throws -> String {
            var dump = ""
            for key in try await server.cli("--scan").split(separator: "\n") {
                dump += key + "\n"
                switch try await server.cli("TYPE", String(key)) {
                case "hash": dump += try await server.cli("HGETALL", String(key))
                case "string": dump += try await server.cli("GET", String(key))
                case "set": dump += try await server.cli("SMEMBERS", String(key))
                case "zset": dump += try await server.cli("ZRANGE", String(key), "0", "-1")
                case "stream": dump += try await server.cli("XRANGE", String(key), "-", "+")
                default: break
                }
                dump += "\n"
            }
            return dump
        }
    }

    private func isValid(_ verification: KeyVerifier.Verification) -> Bool {
        if case .valid = verification { return true }
        return false
    }

    @Test func createPartnerCreateKeyVerify() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.registry.createPartner(name: "NammaYatri", scopes: nil, rate: nil, burst: nil)
        #expect(partner.scopes == ["sdk_tokens:mint"])
        #expect(try await fixture.registry.partners().map(\.id) == [partner.id])
        let (key, record) = try await fixture.registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil)
        #expect(record.scopes == ["sdk_tokens:mint"])
        let verifier = KeyVerifier(registry: fixture.registry)
        guard case .valid(let verified, let owner) = try await verifier.verify(key.text, scope: "sdk_tokens:mint") else {
            Issue.record("a new key must verify")
            return
        }
        #expect(verified.id == record.id)
        #expect(owner.id == partner.id)
        // Missing scope: the key is fine, the action is not allowed.
        guard case .forbidden = try await verifier.verify(key.text, scope: "reports:read") else {
            Issue.record("a key without the scope must be forbidden")
            return
        }
        // Nothing in Redis holds the key itself.
        let dump = try await fixture.everything()
        #expect(!dump.contains(key.text))
        #expect(!dump.contains(String(key.text.dropFirst(9).prefix(43))))
        #expect(dump.contains(key.hash))
    }

    @Test func mistypedKeyIsRefusedWithoutAskingRedis() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.registry.createPartner(name: "P", scopes: nil, rate: nil, burst: nil)
        let (key, _) = try await fixture.registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil)
        var characters = Array(key.text)
        characters[characters.count - 1] = characters.last == "A" ? "B" : "A"
        let verifier = KeyVerifier(registry: fixture.registry)
        try await fixture.server.cli("CONFIG", "RESETSTAT")
        #expect(try await verifier.verify(String(characters), scope: nil) == .invalid)
        #expect(try await verifier.verify("pgk_live_short", scope: nil) == .invalid)
        let stats = try await fixture.server.cli("INFO", "commandstats")
        #expect(!stats.contains("cmdstat_hgetall"), "\(stats)")
        #expect(!stats.contains("cmdstat_get:"), "\(stats)")
    }

    @Test func rotationWithGraceKeepsBothKeysUntilTheGraceEnds() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.registry.createPartner(name: "P", scopes: ["sdk_tokens:mint", "reports:read"], rate: nil, burst: nil)
        let (old, oldRecord) = try await fixture.registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil)
        // A grace of a few seconds: under parallel test load, reaching the listing below can take more than one.
        let (new, newRecord, previous) = try await fixture.registry.rotateKey(id: oldRecord.id, grace: .seconds(3))
        #expect(newRecord.scopes == ["sdk_tokens:mint", "reports:read"])
        #expect(previous.storedStatus == .expiring)
        let verifier = KeyVerifier(registry: fixture.registry, cacheLifetime: .milliseconds(100))
        #expect(isValid(try await verifier.verify(old.text, scope: nil)))
        #expect(isValid(try await verifier.verify(new.text, scope: nil)))
        let keys = try await fixture.registry.keys(partnerID: partner.id)
        // Listed by creation time, then id: two keys made within the same millisecond come in
        // either order, so each is found by its id.
        let statuses = Dictionary(uniqueKeysWithValues: keys.map { ($0.id, $0.status(at: Date())) })
        #expect(statuses == [oldRecord.id: .expiring, newRecord.id: .active])
        // After the grace period only the new key works.
        try await eventually(timeout: .seconds(6)) { try await verifier.verify(old.text, scope: nil) == .invalid }
        #expect(isValid(try await verifier.verify(new.text, scope: nil)))
        #expect(try await fixture.registry.key(id: oldRecord.id)?.status(at: Date()) == .expired)
        // An expiring or expired key cannot be rotated again.
        await #expect(throws: KeyRegistryError.self) { _ = try await fixture.registry.rotateKey(id: oldRecord.id, grace: .zero) }
    }

    /// Redis Cluster: every registry write stays in one slot per command or script, so
    /// create, rotate (two steps, one per key) and revoke work on a cluster.
    @Test func keyLifecycleWorksWhenEachStepStaysInOneSlot() async throws {
        let fixture = try await Fixture(cluster: true)
        let partner = try await fixture.registry.createPartner(name: "P", scopes: nil, rate: nil, burst: nil)
        let (old, oldRecord) = try await fixture.registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil)
        let (new, newRecord, previous) = try await fixture.registry.rotateKey(id: oldRecord.id, grace: .zero)
        #expect(previous.expiresAt != nil)
        let verifier = KeyVerifier(registry: fixture.registry, cacheLifetime: .milliseconds(100))
        #expect(try await verifier.verify(old.text, scope: nil) == .invalid)
        #expect(isValid(try await verifier.verify(new.text, scope: nil)))
        // Two keys made within the same millisecond list in either order.
        #expect(Set(try await fixture.registry.keys(partnerID: partner.id).map(\.id)) == [oldRecord.id, newRecord.id])
        // Rotating an ended key fails and leaves no second new key behind.
        await #expect(throws: KeyRegistryError.self) { _ = try await fixture.registry.rotateKey(id: oldRecord.id, grace: .zero) }
        verifier.invalidate(keyHash: try await fixture.registry.revokeKey(id: newRecord.id).hash)
        #expect(try await verifier.verify(new.text, scope: nil) == .invalid)
        #expect(try await fixture.registry.keys(partnerID: partner.id).count == 2)
    }

    @Test func noRegistryScriptBuildsAKeyName() {
        let scripts = [
            RegistryScripts.rotateKey, RegistryScripts.revokeKey, RegistryScripts.updateKey, RegistryScripts.updatePartner,
            RegistryScripts.createPartner, RegistryScripts.takeOverKeyID, RegistryScripts.revokeAdmin, RegistryScripts.rotateAdmin,
            RegistryScripts.createAdmin,
        ]
        for script in scripts {
            let withoutChannel = script.source.replacingOccurrences(of: "'\(RegistryKeys.invalidationChannel)'", with: "")
            #expect(!withoutChannel.contains("pg:"), "\(script.name) names a key itself")
        }
    }

    @Test func graceNeverOutlivesTheOldKeysOwnExpiry() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.registry.createPartner(name: "P", scopes: nil, rate: nil, burst: nil)
        let now = Date()
        let (_, record) = try await fixture.registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: .seconds(3600), now: now)
        let (_, newRecord, previous) = try await fixture.registry.rotateKey(id: record.id, grace: .seconds(48 * 3600), now: now)
        #expect(abs(previous.expiresAt!.timeIntervalSince(now) - 3600) < 1)
        #expect(abs(newRecord.expiresAt!.timeIntervalSince(now) - 3600) < 1)
    }

    @Test func revocationAndZeroGraceReachASecondInstanceWithinASecond() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.registry.createPartner(name: "P", scopes: nil, rate: nil, burst: nil)
        let (first, firstRecord) = try await fixture.registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil)
        let (verifier, subscriber, pool) = try fixture.instance()
        defer { pool.shutdown() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await subscriber.run() }
            // Warm the other instance's cache (lifetime 60 s): only invalidation can clear it.
            try await eventually { isValid(try await verifier.verify(first.text, scope: nil)) }
            try await Task.sleep(for: .milliseconds(100))  // the subscription's own reset has passed

            let (second, _, _) = try await fixture.registry.rotateKey(id: firstRecord.id, grace: .zero)
            let afterRotate = try await eventually(timeout: .seconds(1), interval: .milliseconds(5)) {
                try await verifier.verify(first.text, scope: nil) == .invalid
            }
            print("zero-grace rotation reached the second instance in \(afterRotate)")
            #expect(isValid(try await verifier.verify(second.text, scope: nil)))

            let secondRecord = try #require(try await fixture.registry.keys(partnerID: partner.id).last)
            _ = try await fixture.registry.revokeKey(id: secondRecord.id)
            let afterRevoke = try await eventually(timeout: .seconds(1), interval: .milliseconds(5)) {
                try await verifier.verify(second.text, scope: nil) == .invalid
            }
            print("revocation reached the second instance in \(afterRevoke)")
            group.cancelAll()
        }
    }

    @Test func disabledPartnersKeysAreForbidden() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.registry.createPartner(name: "P", scopes: nil, rate: nil, burst: nil)
        let (key, _) = try await fixture.registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil)
        let verifier = KeyVerifier(registry: fixture.registry)
        #expect(isValid(try await verifier.verify(key.text, scope: nil)))
        #expect(try await fixture.registry.setPartnerStatus(partner.id, .disabled).status == .disabled)
        verifier.invalidate("partner \(partner.id)")
        guard case .forbidden = try await verifier.verify(key.text, scope: nil) else {
            Issue.record("a disabled partner's key must be forbidden")
            return
        }
        _ = try await fixture.registry.setPartnerStatus(partner.id, .active)
        verifier.invalidate("partner \(partner.id)")
        #expect(isValid(try await verifier.verify(key.text, scope: nil)))
        await #expect(throws: KeyRegistryError.self) { _ = try await fixture.registry.setPartnerStatus("ptr_nope", .disabled) }
    }

    @Test func expiredKeysStopVerifying() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.registry.createPartner(name: "P", scopes: nil, rate: nil, burst: nil)
        let (key, _) = try await fixture.registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: .seconds(2))
        let verifier = KeyVerifier(registry: fixture.registry)
        #expect(isValid(try await verifier.verify(key.text, scope: nil)))
        try await eventually(timeout: .seconds(5)) { try await verifier.verify(key.text, scope: nil) == .invalid }
    }

    @Test func lastUseIsRecordedAtMostOncePerInterval() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.registry.createPartner(name: "P", scopes: nil, rate: nil, burst: nil)
        let (key, record) = try await fixture.registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil)
        #expect(try await fixture.registry.key(id: record.id)?.lastUsedAt == nil)
        let verifier = KeyVerifier(registry: fixture.registry, touchInterval: 60)
        try await fixture.server.cli("CONFIG", "RESETSTAT")
        for _ in 0..<50 { _ = try await verifier.verify(key.text, scope: nil) }
        try await eventually { try await fixture.registry.key(id: record.id)?.lastUsedAt != nil }
        let stats = try await fixture.server.cli("INFO", "commandstats")
        #expect(stats.contains("cmdstat_hset:calls=1,"), "\(stats)")
    }

    @Test func entriesAreRefreshedInTheBackgroundBeforeTheyExpire() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.registry.createPartner(name: "P", scopes: nil, rate: nil, burst: nil)
        let (key, _) = try await fixture.registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil)
        let verifier = KeyVerifier(registry: fixture.registry, cacheLifetime: .seconds(1))
        func lookups() async throws -> Int {
            let stats = try await fixture.server.cli("INFO", "commandstats")
            guard let line = stats.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("cmdstat_hgetall:") }),
                  let calls = line.split(separator: "=").dropFirst().first?.split(separator: ",").first else { return 0 }
            return Int(calls) ?? 0
        }
        let before = try await lookups()
        #expect(isValid(try await verifier.verify(key.text, scope: nil)))
        let afterFirst = try await lookups()
        #expect(afterFirst == before + 2)  // the key record and its partner
        // Past 80% of the lifetime: still answered from the cache, refreshed behind the scenes.
        try await Task.sleep(for: .milliseconds(900))
        #expect(isValid(try await verifier.verify(key.text, scope: nil)))
        try await eventually(timeout: .seconds(2)) { try await lookups() == afterFirst + 2 }
        // Past the original lifetime the refreshed entry is served: no further lookups.
        try await Task.sleep(for: .milliseconds(300))
        #expect(isValid(try await verifier.verify(key.text, scope: nil)))
        #expect(try await lookups() == afterFirst + 2)
    }

    @Test func auditLogIsNewestFirst() async throws {
        let fixture = try await Fixture()
        let log = AuditLog(redis: fixture.redis)
        for index in 0..<5 {
            try await log.append(.init(at: Date(), actor: "alice@ops", action: "key.create", target: "key_\(index)", source: "127.0.0.1"))
        }
        let entries = try await log.newest(3)
        #expect(entries.map(\.target) == ["key_4", "key_3", "key_2"])
        #expect(entries.first?.actor == "alice@ops")
    }

    @Test func partnerUpdatesReachASecondInstancesCacheWithinASecond() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.registry.createPartner(name: "Before", scopes: nil, rate: 5, burst: 10)
        let (key, _) = try await fixture.registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil)
        let configuration = RedisConfiguration(url: try RedisURL(fixture.server.url), poolSize: 2, timeout: .seconds(5))
        let pool = RedisConnectionPool(configuration: configuration)
        let verifier = KeyVerifier(registry: KeyRegistry(redis: pool), cacheLifetime: .seconds(60))
        let subscribed = Mutex(false)
        let subscriber = RedisSubscriber(
            configuration: configuration,
            channels: [KeyRegistry.invalidationChannel],
            onReset: { verifier.reset(); subscribed.withLock { $0 = true } },
            onMessage: { _, message in verifier.invalidate(message) }
        )
        func cachedPartner() async throws -> Partner? {
            if case .valid(_, let partner) = try await verifier.verify(key.text, scope: nil) { return partner }
            return nil
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await subscriber.run() }
            try await eventually { subscribed.withLock { $0 } }
            // The other instance caches the partner for 60 s: only the invalidation can clear it.
            #expect(try await cachedPartner()?.burst == 10)

            let updated = try await fixture.registry.updatePartner(partner.id, name: "After", scopes: ["a:b"], rate: 2.5, burst: 7)
            #expect(updated.name == "After" && updated.burst == 7 && updated.rate == 2.5 && updated.scopes == ["a:b"])
            let elapsed = try await eventually(timeout: .seconds(1), interval: .milliseconds(5)) {
                try await cachedPartner()?.burst == 7
            }
            #expect(try await cachedPartner() == updated)
            print("partner update reached the second instance in \(elapsed)")
            group.cancelAll()
        }
        let unchanged = try await fixture.registry.updatePartner(partner.id, name: nil, scopes: nil, rate: nil, burst: nil)
        #expect(unchanged.name == "After")
        await #expect(throws: KeyRegistryError.self) {
            try await fixture.registry.updatePartner("ptr_0000000000000000", name: "x", scopes: nil, rate: nil, burst: nil)
        }
    }

    @Test func aRevokedKeyCannotBeRevokedAgain() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.registry.createPartner(name: "P", scopes: nil, rate: nil, burst: nil)
        let (_, record) = try await fixture.registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil)
        #expect(try await fixture.registry.revokeKey(id: record.id).storedStatus == .revoked)
        let error = await #expect(throws: KeyRegistryError.self) { try await fixture.registry.revokeKey(id: record.id) }
        #expect(error?.code == .keyAlreadyRevoked)
        let missing = await #expect(throws: KeyRegistryError.self) { try await fixture.registry.revokeKey(id: "key_0000000000000000") }
        #expect(missing?.code == .keyNotFound)
    }

    @Test func keysKeepTheirNameMetaAndStartAndRotationCarriesThem() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.registry.createPartner(name: "P", scopes: nil, rate: nil, burst: nil)
        let (key, record) = try await fixture.registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil, name: "checkout", meta: ["team": "payments", "env": "prod"])
        #expect(record.start == key.start && key.text.hasPrefix(record.start) && record.start.count == 13)
        let stored = try #require(try await fixture.registry.key(hash: key.hash))
        #expect(stored.name == "checkout" && stored.meta == ["team": "payments", "env": "prod"] && stored.start == key.start)
        let (next, nextRecord, _) = try await fixture.registry.rotateKey(id: record.id, grace: .seconds(60))
        #expect(nextRecord.name == "checkout" && nextRecord.meta == stored.meta && nextRecord.start == next.start)
        let plain = try await fixture.registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil).1
        #expect(try await fixture.registry.key(id: plain.id)?.name == nil)
        #expect(try await fixture.registry.key(id: plain.id)?.meta.isEmpty == true)
        // Nothing but the start of a key is stored.
        let dump = try await fixture.everything()
        #expect(!dump.contains(String(key.text.dropFirst(13))))
    }

    /// A key holds its partner's scopes or fewer: asking for more is refused, naming what the
    /// partner lacks, and writes nothing; a rotation after the partner lost a scope drops it.
    @Test func keysOnlyNarrowTheirPartnersScopes() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.registry.createPartner(name: "P", scopes: ["sdk_tokens:mint", "reports:read"], rate: nil, burst: nil)
        let wider = await #expect(throws: KeyRegistryError.self) {
            _ = try await fixture.registry.createKey(partnerID: partner.id, scopes: ["sdk_tokens:mint", "admin:everything"], expiresIn: nil)
        }
        #expect(wider?.code == .scopesNotHeld, "\(String(describing: wider))")
        #expect(wider?.message.contains("admin:everything") == true, "\(String(describing: wider))")
        #expect(wider?.message.contains("sdk_tokens:mint") == false, "\(String(describing: wider))")
        #expect(try await fixture.registry.keys(partnerID: partner.id).isEmpty)

        let (_, narrow) = try await fixture.registry.createKey(partnerID: partner.id, scopes: ["reports:read"], expiresIn: nil)
        #expect(narrow.scopes == ["reports:read"])
        let (_, full) = try await fixture.registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil)
        #expect(full.scopes == ["sdk_tokens:mint", "reports:read"])

        _ = try await fixture.registry.updatePartner(partner.id, name: nil, scopes: ["sdk_tokens:mint"], rate: nil, burst: nil)
        let (_, rotated, _) = try await fixture.registry.rotateKey(id: full.id, grace: .zero)
        #expect(rotated.scopes == ["sdk_tokens:mint"])
        #expect(try await fixture.registry.key(id: rotated.id)?.scopes == ["sdk_tokens:mint"])
    }

    /// Oldest first whatever order they were made in; within one millisecond, by id.
    @Test func partnersAreListedByCreationTimeThenID() async throws {
        let fixture = try await Fixture()
        let base = Date(timeIntervalSince1970: 1_800_000_000)
        var made: [(at: Date, id: String)] = []
        for offset in [2.0, 0.0, 1.0, 1.0, 1.0] {
            let at = base.addingTimeInterval(offset)
            made.append((at, try await fixture.registry.createPartner(name: "P", scopes: nil, rate: nil, burst: nil, now: at).id))
        }
        let expected = made.sorted { ($0.at, $0.id) < ($1.at, $1.id) }.map(\.id)
        #expect(try await fixture.registry.partners().map(\.id) == expected)
    }

    @Test func partnersAndAuditPageInAStableOrder() async throws {
        let fixture = try await Fixture()
        var ids: [String] = []
        for index in 0..<5 { ids.append(try await fixture.registry.createPartner(name: "P\(index)", scopes: nil, rate: nil, burst: nil).id) }
        var seen: [String] = []
        var after: String?
        repeat {
            let (page, more) = try await fixture.registry.partners(after: after, limit: 2)
            seen += page.map(\.id)
            after = more ? page.last?.id : nil
        } while after != nil
        // Oldest first; partners created in the same millisecond are in id order.
        #expect(seen == (try await fixture.registry.partners(after: nil, limit: nil)).partners.map(\.id))
        #expect(seen.count == ids.count && Set(seen) == Set(ids))
        await #expect(throws: KeyRegistryError.self) { try await fixture.registry.partners(after: "ptr_0000000000000000", limit: 2) }

        let log = AuditLog(redis: fixture.redis)
        for index in 0..<5 { try await log.append(.init(at: Date(), actor: "a", action: "partner.create", target: "t\(index)", source: "s")) }
        let (first, more) = try await log.newest(3, before: nil)
        #expect(first.map(\.target) == ["t4", "t3", "t2"] && more)
        let (rest, none) = try await log.newest(3, before: first.last?.id)
        #expect(rest.map(\.target) == ["t1", "t0"] && !none)
        #expect(try await log.newest(3, before: "0-0").entries.isEmpty)
        #expect(try await log.oldest(3, after: "18446744073709551615-18446744073709551615").entries.isEmpty, "the last possible id: nothing after, not an error")
        for bad in ["x", "1-", "-1", "99999999999999999999-0", "1-2-3"] {
            await #expect(throws: KeyRegistryError.self) { try await log.newest(3, before: bad) }
        }
    }
}
