import Foundation
import GatewayContract
import Testing
@testable import GatewayState

/// Applying a plan against an admin API in memory: one call per change, partners before their
/// keys, secrets handed on once, and a stop at the first failure with what was and was not
/// applied.
@Suite struct StateApplierTests {
    /// Records the calls; fails the one whose target is `failing`.
    actor RecordingAPI: StateAPI {
        var calls: [String] = []
        let failing: String?
        /// A create of this name is made but not audited.
        let unaudited: String?

        init(failing: String? = nil, unaudited: String? = nil) {
            self.failing = failing
            self.unaudited = unaudited
        }

        struct Refused: Error {}

        private func record(_ call: String, target: String) throws {
            calls.append(call)
            if target == failing { throw Refused() }
        }

        func partners(_ page: PageRequest) async throws -> Page<PartnerInfo> { Page(items: [], nextCursor: nil) }
        func keys(partnerID: String, _ page: PageRequest) async throws -> Page<KeyInfo> { Page(items: [], nextCursor: nil) }
        func members(partnerID: String, _ page: PageRequest) async throws -> Page<MemberInfo> { Page(items: [], nextCursor: nil) }
        func admins(_ page: PageRequest) async throws -> Page<AdminInfo> { Page(items: [], nextCursor: nil) }

        func createPartner(_ partner: NewPartner) async throws -> PartnerInfo {
            try record("create partner \(partner.name)", target: partner.name)
            return StateFixtures.partner(partner.partnerID ?? "ptr_00000000000000ff", partner.name)
        }

        func updatePartner(_ partnerID: String, _ update: PartnerUpdate, revision: Int) async throws -> PartnerInfo {
            try record("update \(partnerID) at \(revision)", target: partnerID)
            return StateFixtures.partner(partnerID, "x")
        }

        func createKey(partnerID: String, _ key: NewKey) async throws -> CreatedKey {
            try record("create key \(key.name ?? "") of \(partnerID)", target: key.name ?? "")
            let created = CreatedKey(
                keyID: key.keyID ?? "key_00000000000000ff", partnerID: partnerID, key: "pgk_live_secret-of-\(key.name ?? "")", start: "pgk_live_secr",
                name: key.name, meta: [:], scopes: [], createdAt: StateFixtures.created, expiresAt: nil
            )
            if key.name == unaudited { throw UnauditedChange(result: created, failure: Refused()) }
            return created
        }

        func updateKey(_ keyID: String, _ update: KeyUpdate, revision: Int) async throws -> KeyInfo {
            try record("update \(keyID) at \(revision)", target: keyID)
            return StateFixtures.key(keyID, of: "ptr_00000000000000a1")
        }

        func revokeKey(_ keyID: String, revision: Int) async throws -> RevokedKey {
            try record("revoke \(keyID) at \(revision)", target: keyID)
            return RevokedKey(keyID: keyID)
        }

        func createMember(partnerID: String, _ member: NewMember) async throws -> MemberInfo {
            try record("create member \(member.email) of \(partnerID)", target: member.email)
            return StateFixtures.member(member.memberID ?? "mbr_00000000000000ff", of: partnerID, member.email, name: member.name, role: member.role)
        }

        func updateMember(partnerID: String, _ memberID: String, _ update: MemberUpdate, revision: Int) async throws -> MemberInfo {
            try record("update \(memberID) of \(partnerID) at \(revision)", target: memberID)
            return StateFixtures.member(memberID, of: partnerID, "x@x.example", name: "x")
        }

        func removeMember(partnerID: String, _ memberID: String, revision: Int) async throws {
            try record("remove \(memberID) of \(partnerID) at \(revision)", target: memberID)
        }

        func createAdmin(_ admin: NewAdmin) async throws -> CreatedAdmin {
            try record("create admin \(admin.name)", target: admin.name)
            return CreatedAdmin(adminID: "adm_00000000000000ff", name: admin.name, role: admin.role, token: "pga_live_token-of-\(admin.name)", expiresAt: nil)
        }

        func revokeAdmin(_ adminID: String, revision: Int) async throws -> RevokedAdmin {
            try record("revoke \(adminID) at \(revision)", target: adminID)
            return RevokedAdmin(adminID: adminID)
        }
    }

    /// Collects the secrets handed on.
    final class Secrets: @unchecked Sendable {
        private let lock = NSLock()
        private var kept: [String: String] = [:]
        var all: [String: String] { lock.withLock { kept } }

        func keep(_ secret: StateApplier<RecordingAPI>.CreatedSecret) throws -> String {
            lock.withLock { kept[secret.id] = secret.secret }
            return "secrets/\(secret.id)"
        }
    }

    static let text = """
        version: 1
        partners:
        - name: Fresh
          keys:
          - name: first
          members:
          - {email: lead@fresh.example, name: Lead, role: partner_admin}
        - id: ptr_00000000000000a2
          name: Rapido
          rate: 0.5
          burst: 6
          keys:
          - id: key_00000000000000c1
            name: 'true'
            quota: {limit: 5, period: day}
        admins:
        - name: meera
          role: support
        """

    func plan() throws -> StatePlan {
        var snapshot = StateFixtures.snapshot
        snapshot.partners.removeAll { $0.partnerID == "ptr_00000000000000a1" }
        snapshot.admins = []
        return StatePlanner(prune: false, now: StateFixtures.now).plan(try StateFixtures.document(Self.text), against: snapshot)
    }

    @Test func everyChangeIsOneCallAndPartnersComeFirst() async throws {
        let api = RecordingAPI()
        let secrets = Secrets()
        let report = await StateApplier(api: api, width: 1, secrets: secrets.keep).apply(try plan())
        #expect(report.failure == nil && report.notApplied.isEmpty)
        #expect(await api.calls == [
            "create partner Fresh", "update ptr_00000000000000a2 at 1", "create key first of ptr_00000000000000ff",
            "create member lead@fresh.example of ptr_00000000000000ff", "create admin meera",
        ])
        #expect(secrets.all == ["key_00000000000000ff": "pgk_live_secret-of-first", "adm_00000000000000ff": "pga_live_token-of-meera"], "a member has no secret")
        #expect(report.applied.compactMap(\.secretWentTo) == ["secrets/key_00000000000000ff", "secrets/adm_00000000000000ff"])
        #expect(report.applied.map(\.change.id) == [
            "ptr_00000000000000ff", "ptr_00000000000000a2", "key_00000000000000ff", "mbr_00000000000000ff", "adm_00000000000000ff",
        ])
    }

    @Test func theFirstFailureStopsWhatHasNotStarted() async throws {
        let api = RecordingAPI(failing: "ptr_00000000000000a2")
        let report = await StateApplier(api: api, width: 1, secrets: Secrets().keep).apply(try plan())
        #expect(await api.calls == ["create partner Fresh", "update ptr_00000000000000a2 at 1"], "nothing after the failure")
        #expect(report.failure?.change.id == "ptr_00000000000000a2")
        #expect(report.applied.map(\.change.name) == ["Fresh"])
        #expect(report.notApplied.map(\.label) == [
            "partner \"Rapido\" (ptr_00000000000000a2)", "key \"first\" of partner \"Fresh\"", "member lead@fresh.example of partner \"Fresh\"",
            "admin credential \"meera\"",
        ])
    }

    /// The gateway made the key but could not audit it, and handed its secret over in the
    /// refusal: the secret is kept, the key reported created, and the run stops there.
    @Test func aKeyCreatedWithoutItsAuditEntryKeepsItsSecretAndStopsTheRest() async throws {
        let api = RecordingAPI(unaudited: "first")
        let secrets = Secrets()
        let report = await StateApplier(api: api, width: 1, secrets: secrets.keep).apply(try plan())
        #expect(await api.calls.last == "create key first of ptr_00000000000000ff", "nothing after the failure")
        #expect(secrets.all == ["key_00000000000000ff": "pgk_live_secret-of-first"])
        #expect(report.applied.last?.change.id == "key_00000000000000ff")
        #expect(report.applied.last?.secretWentTo == "secrets/key_00000000000000ff")
        #expect(!report.notApplied.map(\.label).contains("key \"first\" of partner \"Fresh\""))
        #expect(try #require(report.failure).error is RecordingAPI.Refused)
    }

    @Test func aKeyWhoseSecretCouldNotBeKeptIsReportedCreatedAndStopsTheRest() async throws {
        struct DiskFull: Error {}
        let api = RecordingAPI()
        let report = await StateApplier(api: api, width: 1, secrets: { _ in throw DiskFull() }).apply(try plan())
        #expect(await api.calls.last == "create key first of ptr_00000000000000ff", "nothing after the failure")
        #expect(report.applied.map(\.change.label).last == "key \"first\" (key_00000000000000ff) of partner \"Fresh\"", "the key exists, by its id")
        #expect(report.applied.last?.secretWentTo == nil)
        #expect(!report.notApplied.map(\.label).contains("key \"first\" of partner \"Fresh\""))
        #expect("\(try #require(report.failure).error)".contains("was created, but its secret could not be kept"))
    }
}
