import Foundation
import GatewayPrimitives
@testable import KeyRegistry
import RedisClient
import Testing
import TestSupport

/// Partners' members, their portal sessions and the bounds of a member's changes to keys,
/// against a redis-server in cluster mode (one node holding every slot refuses any step whose
/// keys span two slots).
@Suite("Members, portal sessions and the partner's grant against a real redis-server", .realProcesses)
struct MemberRegistryTests {
    @Test func membersAreInvitedFoundChangedAndRemoved() async throws {
        let fixture = try await KeyRegistryTests.Fixture(cluster: true)
        let members = MemberRegistry(redis: fixture.redis)
        let partner = try await fixture.registry.createPartner(name: "Acme", scopes: nil, rate: nil, burst: nil)
        let other = try await fixture.registry.createPartner(name: "Other", scopes: nil, rate: nil, burst: nil)
        let asha = try await members.create(partnerID: partner.id, email: "asha@acme.example", name: "Asha", role: .partnerAdmin, createdBy: "root")
        #expect(Member.isID(asha.id) && asha.partnerID == partner.id)
        #expect(try await members.member(id: asha.id) == asha)
        #expect(try await members.member(email: "asha@acme.example") == asha)
        #expect(try await members.member(email: "nobody@acme.example") == nil)

        // One address is one member, whichever partner invites it.
        await #expect(throws: KeyRegistryError.self) {
            try await members.create(partnerID: other.id, email: "asha@acme.example", name: "Asha", role: .viewer, createdBy: "root")
        }
        await #expect(throws: KeyRegistryError(.partnerNotFound, "no partner ptr_0000000000000000")) {
            try await members.create(partnerID: "ptr_0000000000000000", email: "x@y.example", name: "X", role: .viewer, createdBy: "root")
        }
        let ravi = try await members.create(partnerID: partner.id, email: "ravi@acme.example", name: "Ravi", role: .viewer, createdBy: asha.id)
        let page = try await members.members(partnerID: partner.id, after: nil, limit: 1)
        #expect(page.members.map(\.id) == [asha.id] && page.more)
        #expect(try await members.members(partnerID: partner.id, after: asha.id, limit: 5).members.map(\.id) == [ravi.id])
        #expect(try await members.members(partnerID: other.id, after: nil, limit: 5).members.isEmpty)

        let promoted = try await members.update(id: ravi.id, name: nil, role: .developer)
        #expect(promoted.role == .developer && promoted.name == "Ravi")
        try await members.remove(id: ravi.id)
        #expect(try await members.member(id: ravi.id) == nil)
        #expect(try await members.member(email: "ravi@acme.example") == nil)
        #expect(try await members.members(partnerID: partner.id, after: nil, limit: 5).members.map(\.id) == [asha.id])
        await #expect(throws: KeyRegistryError(.memberNotFound, "no member \(ravi.id)")) { try await members.remove(id: ravi.id) }
        // The address is free again, for any partner.
        #expect(try await members.create(partnerID: other.id, email: "ravi@acme.example", name: "Ravi", role: .viewer, createdBy: "root").partnerID == other.id)
    }

    @Test func findingByEmailTakesTheSameCommandsForAMemberAndAStranger() async throws {
        let fixture = try await KeyRegistryTests.Fixture()
        let members = MemberRegistry(redis: fixture.redis)
        let partner = try await fixture.registry.createPartner(name: "Acme", scopes: nil, rate: nil, burst: nil)
        _ = try await members.create(partnerID: partner.id, email: "asha@acme.example", name: "Asha", role: .viewer, createdBy: "root")
        var commands: [String] = []
        for email in ["asha@acme.example", "nobody@acme.example"] {
            try await fixture.server.cli("CONFIG", "RESETSTAT")
            _ = try await members.member(email: email)
            let stats = try await fixture.server.cli("INFO", "commandstats")
            commands.append(stats.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("cmdstat_get:") || $0.hasPrefix("cmdstat_hgetall:") }
                .map { String($0.prefix { $0 != "," }) }.sorted().joined(separator: " "))
        }
        #expect(commands[0] == "cmdstat_get:calls=1 cmdstat_hgetall:calls=1", "\(commands)")
        #expect(commands[0] == commands[1], "\(commands)")
    }

    @Test func sessionsEndAtSignOutRemovalIdleAndTheirEnd() async throws {
        let fixture = try await KeyRegistryTests.Fixture(cluster: true)
        let members = MemberRegistry(redis: fixture.redis)
        let partner = try await fixture.registry.createPartner(name: "Acme", scopes: nil, rate: nil, burst: nil)
        let asha = try await members.create(partnerID: partner.id, email: "asha@acme.example", name: "Asha", role: .developer, createdBy: "root")
        let sessions = MemberSessions(redis: fixture.redis, idle: .seconds(60), lifetime: .seconds(3600))

        let first = try #require(try await sessions.open(for: asha))
        #expect(first.token.hasPrefix(asha.id + "."))
        #expect(abs(first.expiresAt.timeIntervalSinceNow - 3600) < 30)
        let (found, expiresAt) = try #require(try await sessions.member(for: first.token))
        #expect(found == asha && expiresAt == first.expiresAt)
        // Only the secret's hash is in Redis.
        let secret = String(first.token.split(separator: ".")[1])
        #expect(!(try await fixture.server.cli("KEYS", "*")).contains(secret))

        // A new role applies to an open session at its next call.
        _ = try await members.update(id: asha.id, name: nil, role: .viewer)
        #expect(try await sessions.member(for: first.token)?.member.role == .viewer)

        for forged in ["", "mbr_0000000000000000." + String(repeating: "a", count: 64), asha.id + ".nothex", asha.id + "." + String(repeating: "b", count: 64)] {
            #expect(try await sessions.member(for: forged) == nil, "\(forged)")
        }

        try await sessions.close(first.token)
        #expect(try await sessions.member(for: first.token) == nil)

        let second = try #require(try await sessions.open(for: asha))
        try await members.remove(id: asha.id)
        #expect(try await sessions.member(for: second.token) == nil, "a removed member's session is refused")
        #expect(try await sessions.open(for: asha) == nil)

        // Idle: the key's expiry, renewed by each use.
        let bob = try await members.create(partnerID: partner.id, email: "bob@acme.example", name: "Bob", role: .viewer, createdBy: "root")
        let short = MemberSessions(redis: fixture.redis, idle: .seconds(30), lifetime: .seconds(3600))
        let idle = try #require(try await short.open(for: bob))
        let key = "pg:member:{\(bob.id)}:session:\(MemberSessions.hash(String(idle.token.split(separator: ".")[1])))"
        #expect(Int(try await fixture.server.cli("PTTL", key).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 <= 30_000)
        // Its idle time up (as if unused for 30 s): gone, and the next call finds nothing.
        _ = try await fixture.server.cli("PEXPIRE", key, "1")
        try await eventually(timeout: .seconds(5)) { try await fixture.server.cli("EXISTS", key).contains("0") }
        #expect(try await short.member(for: idle.token) == nil)

        // Disabling the partner ends them all.
        let third = try #require(try await sessions.open(for: bob))
        try await sessions.endAll(partnerID: partner.id)
        #expect(try await sessions.member(for: third.token) == nil)
    }

    @Test func aMemberStaysWithinThePartnersGrant() async throws {
        let fixture = try await KeyRegistryTests.Fixture(cluster: true)
        let registry = fixture.registry
        let partner = try await registry.createPartner(name: "Acme", scopes: ["a", "b"], rate: nil, burst: nil, maxKeys: 2)
        _ = try await registry.updatePartner(
            partner.id, name: nil, scopes: nil, rate: nil, burst: nil,
            allowedNetworks: NetworkAllowlist([CIDR("10.0.0.0/8")!]), quota: .some(Quota(limit: 1000, period: .day))
        )
        let (_, key) = try await registry.createKey(partnerID: partner.id, scopes: ["a"], expiresIn: nil, by: .member)

        // Scopes: the partner's or fewer, for everyone.
        await #expect(throws: KeyRegistryError.self) { try await registry.updateKey(id: key.id, name: nil, meta: nil, allowedNetworks: nil, quota: nil, scopes: ["a", "c"]) }
        #expect(try await registry.updateKey(id: key.id, name: nil, meta: nil, allowedNetworks: nil, quota: nil, scopes: ["a", "b"], by: .member).scopes == ["a", "b"])

        // A quota above the partner's, an allowlist wider than its: refused for a member only.
        let above = Quota(limit: 1001, period: .month)
        await #expect(throws: KeyRegistryError.self) {
            try await registry.updateKey(id: key.id, name: nil, meta: nil, allowedNetworks: nil, quota: .some(above), by: .member)
        }
        let wide = NetworkAllowlist([CIDR("10.1.0.0/16")!, CIDR("192.168.0.0/24")!])
        do {
            _ = try await registry.updateKey(id: key.id, name: nil, meta: nil, allowedNetworks: wide, quota: nil, by: .member)
            Issue.record("a wider allowlist was taken")
        } catch let error as KeyRegistryError {
            #expect(error.code == .beyondGrant && error.message.contains("192.168.0.0/24"))
        }
        let narrowed = try await registry.updateKey(
            id: key.id, name: nil, meta: nil, allowedNetworks: NetworkAllowlist([CIDR("10.1.0.0/16")!]), quota: .some(Quota(limit: 500, period: .day)), by: .member
        )
        #expect(narrowed.allowedNetworks.texts == ["10.1.0.0/16"] && narrowed.quota == Quota(limit: 500, period: .day))
        #expect(try await registry.updateKey(id: key.id, name: nil, meta: nil, allowedNetworks: nil, quota: .some(above)).quota == above, "the operator is not bound")

        // max_keys: live keys only; the operator is not bound, a rotation is never refused.
        let (_, second) = try await registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil, by: .member)
        await #expect(throws: KeyRegistryError.self) { try await registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil, by: .member) }
        _ = try await registry.rotateKey(id: second.id, grace: .zero)
        _ = try await registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil)
        _ = try await registry.revokeKey(id: key.id)
        await #expect(throws: KeyRegistryError.self) { try await registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil, by: .member) }
        #expect(try await fixture.server.cli("EXISTS", "pg:partner:{\(partner.id)}:keylock").contains("0"), "the lock is released after a refusal")
    }

    /// Two members creating at once cannot both take the last place.
    @Test func concurrentCreationsStopAtMaxKeys() async throws {
        let fixture = try await KeyRegistryTests.Fixture(cluster: true)
        let partner = try await fixture.registry.createPartner(name: "Acme", scopes: nil, rate: nil, burst: nil, maxKeys: 3)
        let created = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    do {
                        _ = try await fixture.registry.createKey(partnerID: partner.id, scopes: nil, expiresIn: nil, by: .member)
                        return true
                    } catch let error as KeyRegistryError where error.code == .keyLimitReached || error.code == .busy {
                        return false
                    }
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(created == 3)
        #expect(try await fixture.registry.keys(partnerID: partner.id).count == 3)
    }
}
