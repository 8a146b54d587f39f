import Foundation
import GatewayContract
import Testing
import TestSupport
@testable import GatewayState

/// State files read into one document, and every way a file is refused: each problem names
/// the file, the line and the field.
@Suite struct StateFileReaderTests {
    static let partners = """
        version: 1
        partners:
        - id: ptr_00000000000000a1
          name: NammaYatri
          status: active
          rate: 0.5
          burst: 10
          scopes: [sdk_tokens:mint, rides:read]
          allowed_cidrs: [10.0.0.0/8, 192.0.2.7]
          quota: {limit: 100000, period: month}
          keys:
          - id: key_00000000000000b1
            name: checkout
            scopes: [rides:read]
            expires_at: 2027-01-31T00:00:00Z
            allowed_cidrs: [10.1.0.0/16]
            quota: {limit: 10, period: day}
            meta: {team: payments}
          max_keys: 5
          members:
          - id: mbr_00000000000000e1
            email: ' Asha@NammaYatri.example'
            name: Asha
            role: partner_admin
          - {email: ravi@nammayatri.example, name: Ravi, role: viewer}
        - name: Rapido
        """

    func read(_ files: [(String, String)], environment: [String: String] = [:]) throws(StateProblems) -> StateDocument {
        try StateFileReader(environment: environment).read(files.map { StateFileReader.Source(path: $0.0, text: $0.1) })
    }

    /// The problems a set of files is refused with.
    func problems(_ files: [(String, String)], environment: [String: String] = [:]) -> [StateProblem] {
        do {
            _ = try read(files, environment: environment)
            return []
        } catch {
            return error.problems
        }
    }

    @Test func readsEveryFieldAndFillsInDefaults() throws {
        let document = try read([("state.yaml", Self.partners)])
        let partners = try #require(document.partners)
        #expect(document.admins == nil, "no admins section: admins are not managed")
        #expect(partners.count == 2)
        let first = partners[0]
        #expect(first.id == "ptr_00000000000000a1" && first.name == "NammaYatri" && first.status == "active")
        #expect(first.rate == 0.5 && first.burst == 10 && first.scopes == ["sdk_tokens:mint", "rides:read"])
        #expect(first.allowedCIDRs == ["10.0.0.0/8", "192.0.2.7/32"], "ranges as the gateway keeps them")
        #expect(first.quota == QuotaSetting(limit: 100_000, period: "month"))
        let key = try #require(first.keys.first)
        #expect(key.id == "key_00000000000000b1" && key.name == "checkout" && key.scopes == ["rides:read"])
        #expect(key.expiresAt == Date(timeIntervalSince1970: 1_801_353_600))
        #expect(key.allowedCIDRs == ["10.1.0.0/16"] && key.quota == QuotaSetting(limit: 10, period: "day") && key.meta == ["team": "payments"])
        #expect(key.origin.description == "state.yaml:12:5")
        #expect(first.maxKeys == 5)
        #expect(first.members.map(\.id) == ["mbr_00000000000000e1", nil])
        #expect(first.members.map(\.email) == ["asha@nammayatri.example", "ravi@nammayatri.example"], "emails as the gateway keeps them")
        #expect(first.members.map(\.name) == ["Asha", "Ravi"] && first.members.map(\.role) == ["partner_admin", "viewer"])
        let defaults = partners[1]
        #expect(defaults.id == nil && defaults.status == "active" && defaults.rate == 50 && defaults.burst == 100)
        #expect(defaults.scopes == ["sdk_tokens:mint"] && defaults.allowedCIDRs.isEmpty && defaults.quota == nil && defaults.keys.isEmpty)
        #expect(defaults.maxKeys == 20 && defaults.members.isEmpty)
    }

    @Test func filesMergeAndKeysNameTheirPartnerAcrossFiles() throws {
        let shared = """
            version: 1
            partners:
            - name: NammaYatri
              rate: ${NAMMAYATRI_RATE}
              scopes: [sdk_tokens:mint]
            """
        let production = """
            version: 1
            keys:
            - partner: NammaYatri
              name: checkout-${ENVIRONMENT:-staging}
            admins:
            - name: asha
              role: operator
              expires_at: 2027-06-01T00:00:00Z
            """
        let document = try read([("shared/partners.yaml", shared), ("production/keys.yaml", production)], environment: ["NAMMAYATRI_RATE": "20"])
        let partner = try #require(document.partners?.first)
        #expect(partner.rate == 20, "${NAME} from the environment")
        #expect(partner.keys.map(\.name) == ["checkout-staging"], "a key of a top-level section joins the partner it names; the fallback applies")
        #expect(document.admins?.map(\.name) == ["asha"])
        #expect(document.admins?.first?.expiresAt == Date(timeIntervalSince1970: 1_811_808_000))
    }

    @Test func anEmptySectionIsManagedAndEmpty() throws {
        let document = try read([("a.yaml", "version: 1\npartners: []\nadmins:\n")])
        #expect(document.partners == [] && document.admins == [])
    }

    /// One invalid file per rule, each refused at its line and field; the generated set the
    /// process tests apply is the same list.
    @Test(arguments: InvalidStateFiles.all)
    func anInvalidFileIsRefusedAtItsLineAndField(_ invalid: InvalidStateFiles.Case) {
        let found = problems([("bad.yaml", invalid.text)])
        #expect(found.count == 1, "\(invalid.name): \(found)")
        let problem = found.first
        #expect(problem?.file == "bad.yaml", "\(invalid.name)")
        #expect(problem?.line == invalid.line, "\(invalid.name): \(String(describing: problem))")
        #expect(problem?.field == invalid.field, "\(invalid.name): \(String(describing: problem))")
        #expect(problem?.message.contains(invalid.says) == true, "\(invalid.name): \(String(describing: problem))")
    }

    @Test func everyProblemIsReportedAtOnce() {
        let text = """
            version: 1
            partners:
            - name: A
              rate: fast
              colour: blue
            - name: B
              quota: {limit: 0, period: day}
            """
        let found = problems([("many.yaml", text)])
        #expect(found.map(\.line) == [4, 5, 7])
        #expect(found.map(\.field) == ["partners[0].rate", "partners[0].colour", "partners[1].quota.limit"])
        #expect(found.first?.description == "many.yaml:4:9: partners[0].rate: \"fast\" is not a number")
    }

    @Test func aKeyNamingAPartnerNoFileDeclaresIsRefused() {
        let found = problems([("keys.yaml", "version: 1\nkeys:\n- partner: Nobody\n  name: k\n")])
        #expect(found.map(\.description) == ["keys.yaml:3:12: keys[0].partner: no file declares a partner named \"Nobody\""])
    }

    @Test func oneAddressIsOneMemberAcrossPartnersAndFiles() {
        let first = "version: 1\npartners:\n- name: A\n  members:\n  - {email: asha@x.example, name: Asha, role: viewer}\n"
        let second = "version: 1\npartners:\n- name: B\n  members:\n  - {id: mbr_00000000000000e1, email: asha@x.example, name: Asha, role: viewer}\n"
        #expect(problems([("a.yaml", first), ("b.yaml", second)]).map(\.description) == [
            "b.yaml:5:39: partners[0].members[0].email: duplicate email: asha@x.example is also declared at a.yaml:5:13 for partner \"A\" (one address is one member, of one partner)",
        ])
    }

    @Test func duplicateNamesAcrossFilesAreRefusedButIdsMayShareAName() {
        let first = "version: 1\npartners:\n- name: Same\n"
        let second = "version: 1\npartners:\n- name: Same\n"
        #expect(problems([("a.yaml", first), ("b.yaml", second)]).map(\.description) == [
            "b.yaml:3:9: partners[0].name: duplicate name: partner \"Same\" is also declared at a.yaml:3:9 (entries without an id are matched by name)",
        ])
        let withIDs = "version: 1\npartners:\n- {id: ptr_0000000000000001, name: Same}\n- {id: ptr_0000000000000002, name: Same}\n"
        #expect(problems([("ids.yaml", withIDs)]).isEmpty, "an export of a gateway with two partners of one name reads back")
    }

    @Test func anUnsetVariableIsRefusedWhereItIsUsed() {
        let found = problems([("env.yaml", "version: 1\npartners:\n- name: A\n  burst: ${BURST}\n")])
        #expect(found.map(\.description) == ["env.yaml:4:10: partners[0].burst: the environment variable BURST is not set"])
    }

    @Test func aRefusedValueFromTheEnvironmentIsQuotedAsWrittenNeverItsValue() {
        // A variable put in the wrong field may hold a secret: the error (in CI's log) names it.
        let found = problems([("env.yaml", """
            version: 1
            partners:
            - name: A
              rate: ${DB_PASSWORD}
              status: x${DB_PASSWORD}
              allowed_cidrs: ["${DB_PASSWORD}"]
            """)], environment: ["DB_PASSWORD": "hunter2-secret"])
        #expect(found.count == 3)
        #expect(found.allSatisfy { $0.description.contains("${DB_PASSWORD}") && !$0.description.contains("hunter2") }, "\(found)")
        #expect(found.first?.description == "env.yaml:4:9: partners[0].rate: \"${DB_PASSWORD}\" (from the environment) is not a number")
    }

    @Test func substitution() throws {
        let substitution = EnvironmentSubstitution(environment: ["A": "1", "EMPTY": ""])
        #expect(try substitution.substitute("x${A}y") == "x1y")
        #expect(try substitution.substitute("${EMPTY:-d}${MISSING:-e}") == "de")
        #expect(try substitution.substitute("$${A} costs $5") == "${A} costs $5")
        #expect(throws: EnvironmentSubstitution.Failure.self) { try substitution.substitute("${MISSING}") }
        #expect(throws: EnvironmentSubstitution.Failure.self) { try substitution.substitute("${1BAD}") }
        #expect(throws: EnvironmentSubstitution.Failure.self) { try substitution.substitute("${A") }
    }
}
