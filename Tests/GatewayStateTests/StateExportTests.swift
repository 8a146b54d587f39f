import Foundation
import GatewayContract
import Testing
@testable import GatewayState

/// The export: deterministic text, nothing ended and nothing secret, and a file that reads
/// back to a plan with nothing to do.
@Suite struct StateExportTests {
    @Test func theExportIsExactlyThisText() throws {
        let text = try StateExport.yaml(StateFixtures.snapshot)
        #expect(text == """
            # Partners as code: a state file (docs/state-file.schema.json), read by gatewayctl diff and apply.
            version: 1
            partners:
            - id: ptr_00000000000000a1
              name: NammaYatri
              status: active
              rate: 50
              burst: 100
              scopes: ['sdk_tokens:mint', 'rides:read']
              allowed_cidrs: [10.0.0.0/8]
              quota: {limit: 100000, period: month}
              max_keys: 5
              keys:
              - id: key_00000000000000b1
                name: checkout
                status: expiring
                scopes: ['sdk_tokens:mint']
                expires_at: 2026-12-01T00:53:20Z
              - id: key_00000000000000b2
                name: checkout
                status: active
                scopes: ['rides:read']
                allowed_cidrs: [10.1.0.0/16]
                meta: {env: prod, team: payments}
              members:
              - id: mbr_00000000000000e1
                email: asha@nammayatri.example
                name: Asha
                role: partner_admin
              - id: mbr_00000000000000e2
                email: ravi@nammayatri.example
                name: Ravi
                role: viewer
            - id: ptr_00000000000000a2
              name: Rapido
              status: active
              rate: 0.5
              burst: 5
              scopes: ['sdk_tokens:mint']
              max_keys: 20
              keys:
              - id: key_00000000000000c1
                name: 'true'
                status: active
                scopes: ['sdk_tokens:mint']
                quota: {limit: 5, period: day}
            admins:
            - id: adm_00000000000000d1
              name: asha
              role: operator
              expires_at: 2027-01-15T08:00:00Z

            """)
        #expect(!text.contains("pgk_live") && !text.contains("pga_live"), "never a key's or credential's start, let alone its secret")
        #expect(!text.contains("revision"), "revisions are the gateway's, not the files'")
        #expect(!text.contains("key_00000000000000b3") && !text.contains("key_00000000000000b4") && !text.contains("adm_00000000000000d2"), "ended keys and credentials are history")
    }

    @Test func twoExportsOfTheSameStateAreTheSameBytesWhateverTheListOrder() throws {
        var shuffled = StateFixtures.snapshot
        shuffled.partners.reverse()
        shuffled.keys = shuffled.keys.mapValues { $0.reversed() }
        shuffled.members = shuffled.members.mapValues { $0.reversed() }
        shuffled.admins?.reverse()
        #expect(try StateExport.yaml(shuffled) == StateExport.yaml(StateFixtures.snapshot))
    }

    @Test func anExportReadsBackToAPlanWithNothingToDo() throws {
        let document = try StateFixtures.document(try StateExport.yaml(StateFixtures.snapshot))
        let plan = StatePlanner(prune: true, now: StateFixtures.now).plan(document, against: StateFixtures.snapshot)
        #expect(plan.isEmpty, "\(plan.text)")
        #expect(plan.kept.isEmpty)
    }

    @Test func aNameHoldingDollarBraceReadsBackAsItselfNotAsAVariable() throws {
        // Names and values partners choose in the portal may hold `${`: read back, they must
        // stay text, never become the variable of the machine running apply.
        var snapshot = StateFixtures.snapshot
        snapshot.partners[0] = StateFixtures.partner("ptr_00000000000000a2", "Rapido ${GATEWAY_ADMIN_TOKEN}", rate: 0.5, burst: 5)
        snapshot.keys["ptr_00000000000000a2"] = [StateFixtures.key(
            "key_00000000000000c1", of: "ptr_00000000000000a2", name: "$${HOME}", meta: ["team": "a$${b}${c}$"]
        )]
        let text = try StateExport.yaml(snapshot)
        #expect(text.contains("name: Rapido $${GATEWAY_ADMIN_TOKEN}"))
        let document = try StateFixtures.document(text, environment: ["GATEWAY_ADMIN_TOKEN": "pga_live_secret", "HOME": "/root", "c": "x"])
        let plan = StatePlanner(prune: true, now: StateFixtures.now).plan(document, against: snapshot)
        #expect(plan.isEmpty, "\(plan.text)")
        #expect(!plan.text.contains("pga_live_secret"))
    }

    @Test func withoutAdminsTheFileDoesNotManageThem() throws {
        var snapshot = StateFixtures.snapshot
        snapshot.admins = nil
        let text = try StateExport.yaml(snapshot)
        #expect(!text.contains("admins:"))
        #expect(try StateFixtures.document(text).admins == nil)
    }
}
