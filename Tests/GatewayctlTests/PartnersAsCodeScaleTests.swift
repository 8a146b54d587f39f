import Foundation
import Testing
import TestSupport

/// Partners as code at 1,000 partners and 5,000 keys: export, diff and apply each within
/// ``bound`` (the whole process budget, as the bound is wall-clock), and an apply of one
/// changed field one change.
@Suite("gatewayctl: partners as code at 1,000 partners and 5,000 keys", .timingSensitive)
struct PartnersAsCodeScaleTests {
    /// Three times the 30 s each step takes at most on a fast machine, because CI machines
    /// differ in speed by up to three times: work that grew with the square of the partners
    /// still fails it, a slower machine does not.
    static let bound = Duration.seconds(90)

    /// 1,000 partners of 5 keys each, every key with a name and metadata.
    static func state(changingRateOf changed: Int? = nil) -> String {
        var lines = ["version: 1", "partners:"]
        for partner in 0..<1000 {
            lines += [
                "- id: ptr_\(hex(partner))",
                "  name: Partner \(partner)",
                "  rate: \(partner == changed ? 75 : 50)",
                "  scopes: [sdk_tokens:mint, rides:read]",
                "  keys:",
            ]
            for key in 0..<5 {
                lines += ["  - id: key_\(hex(partner * 5 + key))", "    name: key-\(key)", "    meta: {team: team-\(key)}"]
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func hex(_ number: Int) -> String {
        let digits = String(number, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Runs gatewayctl, prints how long it took and checks the bound.
    static func timed(_ what: String, _ fixture: StateFixture, _ arguments: [String]) async throws -> CtlResult {
        let started = ContinuousClock.now
        let result = try await fixture.ctl(arguments)
        let took = ContinuousClock.now - started
        print("partners as code, 1,000 partners and 5,000 keys: \(what) took \(took.formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow)))")
        #expect(took < bound, "\(what) took \(took)")
        return result
    }

    @Test func exportDiffAndApplyEachFinishWithinTheBound() async throws {
        let fixture = try await StateFixture()
        let state = try fixture.write("state.yaml", Self.state())
        let created = try await Self.timed("apply creating everything", fixture, ["apply", "-f", state, "--secrets-out", fixture.folder.path("secrets")])
        #expect(created.status == 0 && created.stdout.contains("Applied 6000 changes."), "\(created.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.folder.path("secrets")).count == 5000)

        let exported = try await Self.timed("export", fixture, ["export", "-o", fixture.folder.path("export.yaml")])
        #expect(exported.status == 0, "\(exported)")
        let export = try fixture.read(fixture.folder.path("export.yaml"))
        #expect(export.components(separatedBy: "\n- id: ptr_").count == 1001 && export.components(separatedBy: "  - id: key_").count == 5001)

        let diffed = try await Self.timed("diff", fixture, ["diff", "-f", fixture.folder.path("export.yaml")])
        #expect(diffed.status == 0 && diffed.stdout.contains("No changes"), "\(diffed)")

        let entries = try await fixture.auditEntries()
        let changed = try fixture.write("changed.yaml", Self.state(changingRateOf: 617))
        let applied = try await Self.timed("apply of one changed field", fixture, ["apply", "-f", changed])
        #expect(applied.status == 0, "\(applied.stderr)")
        #expect(applied.stdout.hasPrefix("~ partner \"Partner 617\" (ptr_\(Self.hex(617)))\n    rate: 50 → 75\n\nPlan: 0 to create, 1 to update, 0 to remove.\n"), "\(applied.stdout.prefix(400))")
        #expect(applied.stdout.contains("Applied 1 change."))
        #expect(try await fixture.auditEntries() == entries + 1, "one change, one audit entry")
    }
}
