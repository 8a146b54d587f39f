import Foundation
import GatewayContract
import Testing
@testable import GatewayState

/// Planning: the fewest calls, one per resource that differs, each field named; what the
/// admin API cannot do blocked with its reason; removals only with prune.
@Suite struct StatePlannerTests {
    let planner = StatePlanner(prune: false, now: StateFixtures.now)

    func plan(_ text: String, prune: Bool = false, start: String? = nil, snapshot: GatewaySnapshot = StateFixtures.snapshot) throws -> StatePlan {
        StatePlanner(prune: prune, now: StateFixtures.now, applyingCredentialStart: start).plan(try StateFixtures.document(text), against: snapshot)
    }

    /// The export of the fixture with `edit` applied to its text.
    func exported(_ edit: (String) -> String) throws -> String {
        edit(try StateExport.yaml(StateFixtures.snapshot))
    }

    @Test func oneChangedFieldIsOneChangeOfThatField() throws {
        let text = try exported { $0.replacingOccurrences(of: "rate: 0.5", with: "rate: 2") }
        let plan = try plan(text)
        #expect(plan.changes.count == 1)
        let change = try #require(plan.changes.first)
        #expect(change.action == .update && change.kind == .partner && change.id == "ptr_00000000000000a2")
        #expect(change.fields == [FieldChange("rate", from: .number(0.5), to: .number(2))])
        #expect(change.operation == .updatePartner(id: "ptr_00000000000000a2", PartnerUpdate(rate: 2), revision: 1))
        #expect(plan.text == """
            ~ partner "Rapido" (ptr_00000000000000a2)
                rate: 0.5 → 2

            Plan: 0 to create, 1 to update, 0 to remove.

            """)
    }

    @Test func aKeysChangedFieldsGoInOnePatchAgainstItsRevision() throws {
        let text = try exported {
            $0.replacingOccurrences(of: "allowed_cidrs: [10.1.0.0/16]", with: "allowed_cidrs: [10.2.0.0/16]")
                .replacingOccurrences(of: "meta: {env: prod, team: payments}", with: "meta: {team: rides}")
        }
        let change = try #require(try plan(text).changes.first)
        #expect(change.fields.map(\.field) == ["meta", "allowed_cidrs"])
        #expect(change.operation == .updateKey(
            id: "key_00000000000000b2", KeyUpdate(allowedCIDRs: ["10.2.0.0/16"], meta: ["team": "rides"]), revision: 1
        ))
    }

    @Test func newResourcesAreCreatedWithTheirIdsOrByName() throws {
        let empty = GatewaySnapshot(partners: [], keys: [:], admins: [])
        let text = """
            version: 1
            partners:
            - id: ptr_00000000000000e1
              name: New
              keys:
              - name: first
            - name: Unnamed
              status: disabled
              keys:
              - id: key_00000000000000f1
                status: revoked
              - name: second
            admins:
            - name: asha
              role: auditor
            """
        let plan = try plan(text, snapshot: empty)
        #expect(plan.changes.map(\.action) == [.create, .create, .create, .create, .create])
        #expect(plan.changes.map(\.kind) == [.partner, .key, .partner, .key, .admin], "a key declared revoked that does not exist is not created")
        #expect(plan.changes[1].operation == .createKey(partner: .id("ptr_00000000000000e1"), NewKey(scopes: ["sdk_tokens:mint"], name: "first")))
        #expect(plan.changes[2].operation == .createPartner(NewPartner(name: "Unnamed", rate: 50, burst: 100, scopes: ["sdk_tokens:mint"], allowedCIDRs: [], status: "disabled", maxKeys: 20)))
        #expect(plan.changes[3].operation == .createKey(partner: .created(name: "Unnamed"), NewKey(scopes: ["sdk_tokens:mint"], name: "second")))
        #expect(plan.changes[4].operation == .createAdmin(NewAdmin(name: "asha", role: "auditor")))
    }

    @Test func whatTheFilesDoNotNameIsKeptUnlessPruned() throws {
        // Rapido (and its key) left out, and the admin section's only credential.
        let text = try exported { text in String(text[..<text.range(of: "- id: ptr_00000000000000a2")!.lowerBound]) + "admins: []\n" }
        let kept = try plan(text)
        #expect(kept.isEmpty, "\(kept.text)")
        #expect(kept.kept.map(\.id) == ["ptr_00000000000000a2", "adm_00000000000000d1"])
        let pruned = try plan(text, prune: true)
        #expect(pruned.changes.map(\.action) == [.remove, .remove])
        #expect(pruned.changes.map(\.operation) == [
            .updatePartner(id: "ptr_00000000000000a2", PartnerUpdate(status: "disabled"), revision: 1),
            .revokeAdmin(id: "adm_00000000000000d1", revision: 1),
        ])
        let spared = try plan(text, prune: true, start: "pga_live_Q7x4")
        #expect(spared.changes.map(\.kind) == [.partner], "the credential applying the files is never pruned")
        #expect(spared.spared.map(\.id) == ["adm_00000000000000d1"])
    }

    @Test func aKeyNotNamedIsRevokedWithPrune() throws {
        let text = try exported { $0.replacingOccurrences(of: "  - id: key_00000000000000c1\n    name: 'true'\n    status: active\n    scopes: ['sdk_tokens:mint']\n    quota: {limit: 5, period: day}\n", with: "") }
        #expect(try plan(text).kept.map(\.id) == ["key_00000000000000c1"])
        let pruned = try plan(text, prune: true)
        #expect(pruned.changes.map(\.operation) == [.revokeKey(id: "key_00000000000000c1", revision: 1)])
        #expect(pruned.text.hasPrefix("- key \"true\" (key_00000000000000c1) of partner \"Rapido\"\n    status: active → revoked\n"))
    }

    @Test func whatTheAdminAPICannotChangeIsBlockedWithItsReason() throws {
        let expiry = try plan(try exported { $0.replacingOccurrences(of: "expires_at: 2026-12-01T00:53:20Z", with: "expires_at: 2026-12-02T00:53:20Z") })
        #expect(expiry.blocked.count == 1)
        #expect(expiry.blocked.first?.blocked?.contains("a key's expiry is fixed when it is created") == true)
        #expect(expiry.blocked.first?.operation == nil)
        #expect(expiry.text.hasPrefix("! key \"checkout\" (key_00000000000000b1) of partner \"NammaYatri\"\n    expires_at: 2026-12-01T00:53:20Z → 2026-12-02T00:53:20Z\n    cannot be applied: "))

        let ended = try plan("version: 1\npartners:\n- id: ptr_00000000000000a1\n  name: NammaYatri\n  scopes: [sdk_tokens:mint, rides:read]\n  allowed_cidrs: [10.0.0.0/8]\n  quota: {limit: 100000, period: month}\n  keys:\n  - id: key_00000000000000b3\n")
        #expect(ended.blocked.first?.blocked?.contains("key_00000000000000b3 is revoked, and an ended key cannot come back") == true)

        let role = try plan(try exported { $0.replacingOccurrences(of: "role: operator", with: "role: owner") })
        #expect(role.blocked.first?.fields == [FieldChange("role", from: .word("operator"), to: .word("owner"))])
    }

    @Test func whatExpiredAtTheExpiryTheFileGivesIsNoChange() throws {
        // A file exported while a rotated key and a credential were live, planned after both
        // expired: the file says what happened, so CI's apply of it goes on working.
        let text = try StateExport.yaml(StateFixtures.snapshot)
        var later = StateFixtures.snapshot
        later.keys["ptr_00000000000000a1"]![1] = StateFixtures.key(
            "key_00000000000000b1", of: "ptr_00000000000000a1", name: "checkout", status: "expired", expiresAt: Date(timeIntervalSince1970: 1_796_086_400)
        )
        later.admins![0] = StateFixtures.admin("adm_00000000000000d1", "asha", status: "expired", expiresAt: Date(timeIntervalSince1970: 1_800_000_000))
        let planner = StatePlanner(prune: true, now: Date(timeIntervalSince1970: 1_800_000_001))
        let plan = planner.plan(try StateFixtures.document(text), against: later)
        #expect(plan.isEmpty, "\(plan.text)")

        // Declared by name, without ids: matched to what expired under that name and expiry.
        let byName = text.replacingOccurrences(of: "- id: adm_00000000000000d1\n  ", with: "- ")
        #expect(byName != text)
        #expect(planner.plan(try StateFixtures.document(byName), against: later).isEmpty)

        // Another expiry is still a change the admin API cannot make.
        let moved = text.replacingOccurrences(of: "expires_at: 2027-01-15T08:00:00Z", with: "expires_at: 2027-02-15T08:00:00Z")
        #expect(moved != text)
        #expect(planner.plan(try StateFixtures.document(moved), against: later).blocked.map(\.kind) == [.admin])
    }

    @Test func aKeysScopesChangeInPlace() throws {
        // The admin API changes a key's scopes (within its partner's), as the portal does.
        let text = try exported { $0.replacingOccurrences(of: "scopes: ['rides:read']", with: "scopes: [sdk_tokens:mint, rides:read]") }
        let change = try #require(try plan(text).changes.first)
        #expect(change.blocked == nil)
        #expect(change.fields == [FieldChange("scopes", from: .list(["rides:read"]), to: .list(["sdk_tokens:mint", "rides:read"]))])
        #expect(change.operation == .updateKey(id: "key_00000000000000b2", KeyUpdate(scopes: ["sdk_tokens:mint", "rides:read"]), revision: 1))
    }

    @Test func whatAPlanWouldGiveAKeyFitsItsPartnerWhatAKeyKeepsNeedNot() throws {
        // NammaYatri gave up rides:read and its allowlist narrowed after its key was made with
        // them: the export reads back, and plans nothing.
        var narrowed = StateFixtures.snapshot
        narrowed.partners[1] = StateFixtures.partner(
            "ptr_00000000000000a1", "NammaYatri", cidrs: ["10.1.0.0/24"], quota: QuotaSetting(limit: 100_000, period: "month"), maxKeys: 5
        )
        let text = try StateExport.yaml(narrowed)
        let kept = StatePlanner(prune: true, now: StateFixtures.now).plan(try StateFixtures.document(text), against: narrowed)
        #expect(kept.isEmpty, "\(kept.text)")

        // Giving a key a scope or range its partner lacks is blocked, on a new key or a change.
        let changed = text.replacingOccurrences(of: "scopes: ['rides:read']", with: "scopes: ['rides:read', 'rides:write']")
        #expect(changed != text)
        let widened = StatePlanner(prune: false, now: StateFixtures.now).plan(try StateFixtures.document(changed), against: narrowed)
        #expect(widened.blocked.count == 1 && widened.blocked.first?.operation == nil)
        #expect(widened.blocked.first?.blocked?.contains("rides:read, rides:write not held by partner \"NammaYatri\"") == true, "\(widened.text)")
        let created = try plan("""
            version: 1
            partners:
            - id: ptr_00000000000000a2
              name: Rapido
              rate: 0.5
              burst: 5
              keys:
              - id: key_00000000000000c1
                name: 'true'
                quota: {limit: 5, period: day}
              - name: new
                scopes: [rides:write]
                allowed_cidrs: [10.0.0.0/8]
            """)
        #expect(created.blocked.map(\.action) == [.create])
        #expect(created.blocked.first?.blocked == "rides:write not held by partner \"Rapido\" (its scopes: sdk_tokens:mint): a key holds its partner's scopes or fewer")
    }

    @Test func anAmbiguousNameIsBlocked() throws {
        let text = "version: 1\npartners:\n- name: NammaYatri\n  scopes: [sdk_tokens:mint, rides:read]\n  allowed_cidrs: [10.0.0.0/8]\n  quota: {limit: 100000, period: month}\n  keys:\n  - name: checkout\n"
        let plan = try plan(text)
        #expect(plan.blocked.map(\.kind) == [.key])
        #expect(plan.blocked.first?.blocked == "2 keys of partner \"NammaYatri\" are named \"checkout\": give the id of the one meant")
    }

    @Test func maxKeysIsAPartnersFieldLikeTheOthers() throws {
        let change = try #require(try plan(try exported { $0.replacingOccurrences(of: "max_keys: 5", with: "max_keys: 8") }).changes.first)
        #expect(change.fields == [FieldChange("max_keys", from: .number(5), to: .number(8))])
        #expect(change.operation == .updatePartner(id: "ptr_00000000000000a1", PartnerUpdate(maxKeys: 8), revision: 1))
        let defaulted = try plan(try exported { $0.replacingOccurrences(of: "  max_keys: 20\n", with: "") })
        #expect(defaulted.isEmpty, "left out, max_keys is its default, 20: \(defaulted.text)")
    }

    /// Members are matched by id, else by email; a name or role changes in place against the
    /// member's revision; an email is fixed and one member's across all partners.
    @Test func membersAreInvitedChangedAndKeptOrRemoved() throws {
        let changed = try plan(try exported {
            $0.replacingOccurrences(of: "name: Ravi\n    role: viewer", with: "name: Ravi K\n    role: developer")
                .replacingOccurrences(of: "  members:\n", with: "  members:\n  - email: Meera@NammaYatri.example\n    name: Meera\n    role: viewer\n")
        })
        #expect(changed.changes.map(\.action) == [.create, .update], "in the files' order")
        #expect(changed.changes[0].operation == .createMember(
            partner: .id("ptr_00000000000000a1"), NewMember(email: "meera@nammayatri.example", name: "Meera", role: "viewer")
        ), "an email is kept lowercase, as the gateway keeps it")
        #expect(changed.changes[1].fields == [
            FieldChange("name", from: .text("Ravi"), to: .text("Ravi K")), FieldChange("role", from: .word("viewer"), to: .word("developer")),
        ])
        #expect(changed.changes[1].operation == .updateMember(
            partnerID: "ptr_00000000000000a1", id: "mbr_00000000000000e2", MemberUpdate(name: "Ravi K", role: "developer"), revision: 3
        ))
        #expect(changed.text.hasPrefix("""
            + member meera@nammayatri.example of partner "NammaYatri"
                email: "meera@nammayatri.example"
                name: "Meera"
                role: viewer
            ~ member ravi@nammayatri.example (mbr_00000000000000e2) of partner "NammaYatri"
                name: "Ravi" → "Ravi K"
                role: viewer → developer
            """))

        let byEmail = try plan(try exported { $0.replacingOccurrences(of: "  - id: mbr_00000000000000e1\n    email:", with: "  - email:") })
        #expect(byEmail.isEmpty, "a member without an id is matched by email: \(byEmail.text)")

        let left = try exported { $0.replacingOccurrences(of: "  - id: mbr_00000000000000e2\n    email: ravi@nammayatri.example\n    name: Ravi\n    role: viewer\n", with: "") }
        #expect(try plan(left).kept.map(\.id) == ["mbr_00000000000000e2"])
        let pruned = try plan(left, prune: true)
        #expect(pruned.changes.map(\.operation) == [.removeMember(partnerID: "ptr_00000000000000a1", id: "mbr_00000000000000e2", revision: 3)])
        #expect(pruned.text.hasPrefix("- member ravi@nammayatri.example (mbr_00000000000000e2) of partner \"NammaYatri\"\n    role: viewer → none\n"))
    }

    @Test func aMembersEmailIsFixedAndOneMembersAcrossPartners() throws {
        let moved = try plan(try exported { $0.replacingOccurrences(of: "email: ravi@nammayatri.example", with: "email: ravi@elsewhere.example") })
        #expect(moved.blocked.count == 1)
        #expect(moved.blocked.first?.blocked?.contains("a member's email is fixed") == true)
        #expect(moved.blocked.first?.fields == [FieldChange("email", from: .text("ravi@nammayatri.example"), to: .text("ravi@elsewhere.example"))])

        let taken = try plan(try exported {
            $0.replacingOccurrences(of: "  max_keys: 20\n", with: "  max_keys: 20\n  members:\n  - {email: asha@nammayatri.example, name: Asha, role: viewer}\n")
                .replacingOccurrences(of: "  - id: mbr_00000000000000e1\n    email: asha@nammayatri.example\n    name: Asha\n    role: partner_admin\n", with: "")
        })
        #expect(taken.blocked.map(\.partner) == ["Rapido"])
        #expect(taken.blocked.first?.blocked == "asha@nammayatri.example is member mbr_00000000000000e1 of partner \"NammaYatri\" (ptr_00000000000000a1): one address is one member, of one partner")

        let elsewhere = try plan(try exported {
            $0.replacingOccurrences(of: "  max_keys: 20\n", with: "  max_keys: 20\n  members:\n  - {id: mbr_00000000000000e1, email: asha@nammayatri.example, name: Asha, role: viewer}\n")
                .replacingOccurrences(of: "  - id: mbr_00000000000000e1\n    email: asha@nammayatri.example\n    name: Asha\n    role: partner_admin\n", with: "")
        })
        #expect(elsewhere.blocked.first?.blocked?.contains("mbr_00000000000000e1 is a member of partner \"NammaYatri\" (ptr_00000000000000a1): a member cannot move to another partner") == true)
    }

    @Test func theDocumentIsStable() throws {
        let text = try exported { $0.replacingOccurrences(of: "burst: 5", with: "burst: 6") }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(try plan(text)), as: UTF8.self)
        #expect(json == #"{"changes":[{"action":"update","blocked":null,"declared_at":"state.yaml:34:3","fields":[{"field":"burst","from":5,"to":6}],"id":"ptr_00000000000000a2","kind":"partner","name":"Rapido","partner":null}],"kept":[],"summary":{"blocked":0,"create":0,"remove":0,"update":1}}"#)
    }
}
