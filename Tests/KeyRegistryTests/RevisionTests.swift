import Foundation
import GatewayContract
@testable import KeyRegistry
import Testing
import TestSupport

/// Revisions and chosen ids, on a one-node Redis Cluster (every new script stays in one
/// slot): each change counts the revision up in its own step, a change against another
/// revision writes nothing, and an id is taken once.
@Suite("Revisions and chosen ids against a real redis-server", .realProcesses)
struct RevisionTests {
    @Test func aChangeAtAnotherRevisionWritesNothing() async throws {
        let fixture = try await KeyRegistryTests.Fixture(cluster: true)
        let registry = fixture.registry
        let partner = try await registry.createPartner(
            id: "ptr_00000000000000a1", name: "P", scopes: nil, rate: nil, burst: nil, quota: Quota(limit: 5, period: .day), status: .disabled
        )
        #expect(partner.revision == 1 && partner.status == .disabled && partner.quota?.limit == 5)
        await #expect(throws: KeyRegistryError(.alreadyExists, "partner ptr_00000000000000a1 exists already")) {
            _ = try await registry.createPartner(id: "ptr_00000000000000a1", name: "Again", scopes: nil, rate: nil, burst: nil)
        }
        #expect(try await registry.partner(partner.id)?.name == "P", "the second create wrote nothing")

        let updated = try await registry.updatePartner(partner.id, burst: 7, status: .active, revision: 1)
        #expect(updated.revision == 2 && updated.burst == 7 && updated.status == .active, "one step, one revision")
        await #expect(throws: KeyRegistryError.self) { _ = try await registry.updatePartner(partner.id, burst: 9, revision: 1) }
        await #expect(throws: KeyRegistryError.self) { _ = try await registry.setPartnerStatus(partner.id, .disabled, revision: 1) }
        #expect(try await registry.partner(partner.id)?.burst == 7)

        let expiry = Date(timeIntervalSince1970: 1_900_000_000)
        let (_, key) = try await registry.createKey(id: "key_00000000000000b1", partnerID: partner.id, scopes: nil, expiresIn: nil, expiresAt: expiry, name: "k")
        #expect(key.revision == 1 && key.expiresAt == expiry)
        await #expect(throws: KeyRegistryError(.alreadyExists, "key key_00000000000000b1 exists already")) {
            _ = try await registry.createKey(id: "key_00000000000000b1", partnerID: partner.id, scopes: nil, expiresIn: nil)
        }
        #expect(try await registry.keys(partnerID: partner.id).count == 1)
        let renamed = try await registry.updateKey(id: key.id, name: "renamed", meta: nil, allowedNetworks: nil, quota: nil, revision: 1)
        #expect(renamed.revision == 2)
        do {
            _ = try await registry.updateKey(id: key.id, name: "stale", meta: nil, allowedNetworks: nil, quota: nil, revision: 1)
            Issue.record("a change at revision 1 of a key at revision 2 was made")
        } catch let error as KeyRegistryError {
            #expect(error.code == .revisionChanged)
        }
        await #expect(throws: KeyRegistryError.self) { _ = try await registry.revokeKey(id: key.id, revision: 1) }
        await #expect(throws: KeyRegistryError.self) { _ = try await registry.rotateKey(id: key.id, grace: .zero, revision: 1) }
        #expect(try await registry.key(id: key.id)?.storedStatus == .active)
        #expect(try await registry.keys(partnerID: partner.id).count == 1, "a refused rotation leaves no new key")
        #expect(try await registry.revokeKey(id: key.id, revision: 2).revision == 3)
        try await registry.touch(hash: key.hash, at: Date())
        #expect(try await registry.key(id: key.id)?.revision == 3, "a key's use is not a change")

        let admins = AdminRegistry(redis: fixture.redis)
        let (_, admin) = try await admins.create(id: "adm_00000000000000c1", name: "asha", role: .auditor, expiresIn: nil, expiresAt: expiry, createdBy: "root")
        #expect(admin.revision == 1 && admin.expiresAt == expiry)
        await #expect(throws: KeyRegistryError.self) { _ = try await admins.create(id: admin.id, name: "again", role: .auditor, expiresIn: nil, createdBy: "root") }
        await #expect(throws: KeyRegistryError.self) { _ = try await admins.rotate(id: admin.id, expiresIn: nil, revision: 2) }
        await #expect(throws: KeyRegistryError.self) { _ = try await admins.revoke(id: admin.id, revision: 2) }
        #expect(try await admins.rotate(id: admin.id, expiresIn: nil, revision: 1).1.revision == 2)
        #expect(try await admins.revoke(id: admin.id, revision: 2).revision == 3)

        let members = MemberRegistry(redis: fixture.redis)
        let member = try await members.create(
            id: "mbr_00000000000000e1", partnerID: partner.id, email: "asha@p.example", name: "Asha", role: .viewer, createdBy: "root"
        )
        #expect(member.revision == 1 && member.id == "mbr_00000000000000e1")
        await #expect(throws: KeyRegistryError(.alreadyExists, "member mbr_00000000000000e1 exists already")) {
            _ = try await members.create(id: member.id, partnerID: partner.id, email: "ravi@p.example", name: "Ravi", role: .viewer, createdBy: "root")
        }
        #expect(try await members.member(email: "ravi@p.example") == nil, "a create refused for its id leaves its address free")
        let promoted = try await members.update(id: member.id, name: nil, role: .developer, revision: 1)
        #expect(promoted.revision == 2 && promoted.role == .developer)
        await #expect(throws: KeyRegistryError.self) { _ = try await members.update(id: member.id, name: "Stale", role: nil, revision: 1) }
        await #expect(throws: KeyRegistryError.self) { _ = try await members.remove(id: member.id, revision: 1) }
        #expect(try await members.member(id: member.id)?.name == "Asha", "a refused change or removal writes nothing")
        try await members.remove(id: member.id, revision: 2)
        #expect(try await members.member(id: member.id) == nil)
    }

    /// What a create cut off half-way left (Redis failed between its steps) does not block
    /// creating the same id again: a key's claim naming no record is taken over, a partner's
    /// unlisted record is listed.
    @Test func whatACutOffCreateLeftIsTakenOverOrListed() async throws {
        let fixture = try await KeyRegistryTests.Fixture(cluster: true)
        let registry = fixture.registry
        let partner = try await registry.createPartner(id: "ptr_00000000000000a2", name: "P", scopes: nil, rate: nil, burst: nil)
        try await fixture.server.cli("SET", "pg:keyid:{key_00000000000000b2}", String(repeating: "0", count: 64))
        let (_, key) = try await registry.createKey(id: "key_00000000000000b2", partnerID: partner.id, scopes: nil, expiresIn: nil)
        #expect(try await registry.key(id: "key_00000000000000b2")?.hash == key.hash)
        await #expect(throws: KeyRegistryError(.alreadyExists, "key key_00000000000000b2 exists already")) {
            _ = try await registry.createKey(id: "key_00000000000000b2", partnerID: partner.id, scopes: nil, expiresIn: nil)
        }
        #expect(try await registry.key(id: "key_00000000000000b2")?.hash == key.hash, "a claim naming a key is never taken")

        try await fixture.server.cli("HSET", "pg:partner:{ptr_00000000000000a3}", "name", "Cut", "status", "active")
        #expect(try await registry.partners().map(\.id) == [partner.id])
        await #expect(throws: KeyRegistryError(.alreadyExists, "partner ptr_00000000000000a3 exists already")) {
            _ = try await registry.createPartner(id: "ptr_00000000000000a3", name: "Cut", scopes: nil, rate: nil, burst: nil)
        }
        #expect(try await registry.partners().map(\.id) == [partner.id, "ptr_00000000000000a3"], "listed, for the next plan to find")
    }
}
