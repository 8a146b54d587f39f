import Foundation
import Testing
import TestSupport

/// Partners as code against real gateways: `export`, `diff` and `apply` round trip, find and
/// undo drift, create keys whose secrets go only where the operator said, refuse bad files
/// without touching Redis, and remove only with `--prune` and a confirmation.
@Suite("gatewayctl: partners as code", .realProcesses)
struct PartnersAsCodeTests {
    /// A gateway's state made with the ordinary commands: two partners (one disabled, one
    /// with an allowlist, a quota, its own max_keys and two members), keys with every field,
    /// an admin credential.
    static func seed(_ fixture: StateFixture) async throws {
        let partner = try await fixture.succeed(
            "partners", "create", "--name", "NammaYatri", "--rate", "20", "--burst", "40", "--scopes", "sdk_tokens:mint,rides:read", "--max-keys", "5",
            "-o", "json"
        ).object()
        let partnerID = try #require(partner["partner_id"] as? String)
        try await fixture.succeed("partners", "update", partnerID, "--allowed-cidrs", "127.0.0.0/8,10.0.0.0/8", "--quota", "100000/month")
        let key = try await fixture.succeed(
            "keys", "create", "--partner", partnerID, "--name", "checkout", "--scopes", "rides:read", "--meta", "team=payments", "--expires-in", "90d", "-o", "json"
        ).object()
        try await fixture.succeed("keys", "update", try #require(key["key_id"] as? String), "--allowed-cidrs", "127.0.0.1", "--quota", "1000/day")
        try await fixture.succeed("keys", "create", "--partner", partnerID, "-o", "json")
        try await fixture.succeed("members", "create", "--partner", partnerID, "--email", "Asha@NammaYatri.example", "--name", "Asha", "--role", "partner_admin")
        try await fixture.succeed("members", "create", "--partner", partnerID, "--email", "ravi@nammayatri.example", "--name", "Ravi", "--role", "developer")
        let other = try await fixture.succeed("partners", "create", "--name", "Rapido", "-o", "json").object()
        try await fixture.succeed("partners", "disable", try #require(other["partner_id"] as? String), "--yes")
        try await fixture.succeed("admins", "create", "--name", "asha", "--role", "operator", "--expires-in", "30d", "-o", "json")
    }

    @Test func exportApplyExportRoundTripsAndASecondApplyChangesNothing() async throws {
        async let makeSource = StateFixture()
        async let makeTarget = StateFixture()
        let (source, target) = try await (makeSource, makeTarget)
        try await Self.seed(source)
        let exported = try await source.succeed("export").stdout
        let state = try target.write("state.yaml", exported)

        let secrets = target.folder.path("secrets")
        let applied = try await target.ctl(["apply", "-f", state, "--secrets-out", secrets])
        #expect(applied.status == 0, "\(applied)")
        #expect(applied.stdout.contains("Plan: 7 to create, 0 to update, 0 to remove."), "\(applied)")
        try await target.succeed("export", "-o", target.folder.path("again.yaml"))
        #expect(try target.read(target.folder.path("again.yaml")) == exported, "export → apply on an empty gateway → export is the same bytes")
        #expect(exported.contains("max_keys: 5") && exported.contains("email: asha@nammayatri.example") && exported.contains("role: developer"), "\(exported)")
        #expect(!exported.contains("revision") && !exported.contains("session"), "no revision, session or code: \(exported)")

        let entries = try await target.auditEntries()
        #expect(entries == 7, "one audit entry per change")
        let second = try await target.ctl(["apply", "-f", state])
        #expect(second.status == 0 && second.stdout.contains("No changes: the gateway matches the files."), "\(second)")
        #expect(try await target.auditEntries() == entries, "the second apply changed nothing, so audited nothing")
        let diff = try await target.ctl(["diff", "-f", state])
        #expect(diff.status == 0, "\(diff)")
    }

    @Test func driftIsNamedByItsFieldAndApplyPutsItBack() async throws {
        let fixture = try await StateFixture()
        try await Self.seed(fixture)
        let state = try fixture.write("state.yaml", try await fixture.succeed("export").stdout)
        let keys = try await fixture.succeed("keys", "list", "--partner", try Self.partnerID(fixture, "NammaYatri"), "-o", "json").object()
        let checkout = try #require((keys["items"] as? [[String: Any]])?.first { $0["name"] as? String == "checkout" })
        let keyID = try #require(checkout["key_id"] as? String)

        try await fixture.succeed("keys", "update", keyID, "--quota", "5/day")
        let drift = try await fixture.ctl(["diff", "-f", state, "-o", "json"])
        #expect(drift.status == 1, "\(drift)")
        let changes = try #require(try drift.object()["changes"] as? [[String: Any]])
        #expect(changes.count == 1)
        #expect(changes.first?["id"] as? String == keyID && changes.first?["action"] as? String == "update")
        let fields = try #require(changes.first?["fields"] as? [[String: Any]])
        #expect(fields.map { $0["field"] as? String } == ["quota"], "exactly the field changed: \(fields)")
        #expect((fields.first?["from"] as? [String: Any])?["limit"] as? Int == 5 && (fields.first?["to"] as? [String: Any])?["limit"] as? Int == 1000)
        let text = try await fixture.ctl(["diff", "-f", state])
        #expect(text.status == 1 && text.stdout.contains("~ key \"checkout\" (\(keyID)) of partner \"NammaYatri\"\n    quota: 5/day → 1000/day\n"), "\(text)")

        let entries = try await fixture.auditEntries()
        let applied = try await fixture.ctl(["apply", "-f", state])
        #expect(applied.status == 0 && applied.stdout.contains("Applied 1 change."), "\(applied)")
        #expect(try await fixture.auditEntries() == entries + 1, "one change, one audit entry")
        let back = try await fixture.succeed("keys", "get", keyID, "-o", "json").object()
        #expect((back["quota"] as? [String: Any])?["limit"] as? Int == 1000)
        #expect(try await fixture.ctl(["diff", "-f", state]).status == 0)

        // A member's role changed by hand (as a partner_admin may in the portal) is drift too.
        let partnerID = try await Self.partnerID(fixture, "NammaYatri")
        let ravi = try await Self.member(fixture, partnerID, "ravi@nammayatri.example")
        try await fixture.succeed("members", "update", ravi, "--partner", partnerID, "--role", "viewer")
        let memberDrift = try await fixture.ctl(["diff", "-f", state, "-o", "json"])
        #expect(memberDrift.status == 1, "\(memberDrift)")
        let memberChanges = try #require(try memberDrift.object()["changes"] as? [[String: Any]])
        #expect(memberChanges.count == 1 && memberChanges.first?["kind"] as? String == "member" && memberChanges.first?["id"] as? String == ravi)
        #expect((memberChanges.first?["fields"] as? [[String: Any]])?.map { $0["field"] as? String } == ["role"], "\(memberChanges)")
        let memberText = try await fixture.ctl(["diff", "-f", state])
        #expect(memberText.stdout.contains("~ member ravi@nammayatri.example (\(ravi)) of partner \"NammaYatri\"\n    role: viewer → developer\n"), "\(memberText)")
        let before = try await fixture.auditEntries()
        let restored = try await fixture.ctl(["apply", "-f", state])
        #expect(restored.status == 0 && restored.stdout.contains("Applied 1 change."), "\(restored)")
        #expect(try await fixture.auditEntries() == before + 1)
        #expect(try await Self.members(fixture, partnerID).first { $0["member_id"] as? String == ravi }?["role"] as? String == "developer")
        #expect(try await fixture.ctl(["diff", "-f", state]).status == 0)
    }

    /// A key created by apply works, and its secret is in its file (mode 600) and nowhere
    /// else: not in the export, the state file, the audit trail, the gateway's log or what
    /// gatewayctl printed.
    @Test func aCreatedKeysSecretIsOnlyInTheSecretsFolder() async throws {
        let fixture = try await StateFixture()
        let state = try fixture.write("state.yaml", """
            version: 1
            partners:
            - name: Yatri
              scopes: [rides:read]
              allowed_cidrs: [127.0.0.0/8]
            keys:
            - partner: Yatri
              name: backend-${ENVIRONMENT}
              meta: {team: rides}
            """)
        let secrets = fixture.folder.path("secrets")
        let refused = try await fixture.ctl(["apply", "-f", state], environment: ["ENVIRONMENT": "prod"])
        #expect(refused.status == 64 && refused.stderr.contains("--secrets-out"), "no place for the secret, no change: \(refused)")
        #expect(try await fixture.auditEntries() == 0)

        let applied = try await fixture.ctl(["apply", "-f", state, "--secrets-out", secrets], environment: ["ENVIRONMENT": "prod"])
        #expect(applied.status == 0, "\(applied)")
        let files = try FileManager.default.contentsOfDirectory(atPath: secrets)
        try #require(files.count == 1, "\(files)")
        let path = secrets + "/" + files[0]
        #expect(files[0].hasPrefix("key_"), "named after the key's id")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        let secret = try fixture.read(path).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(secret.hasPrefix("pgk_live_"))
        #expect(try await fixture.callPartnerAPI(key: secret) == 200, "the key works on an api_key route")

        let export = try await fixture.succeed("export").stdout
        #expect(export.contains("name: backend-prod"))
        let audit = try await fixture.succeed("audit", "export").stdout
        #expect(audit.contains("key.create"))
        let log = try fixture.read(fixture.gateway.logPath)
        for (place, text) in [("export", export), ("state file", try fixture.read(state)), ("audit trail", audit), ("gateway log", log), ("gatewayctl's output", applied.stdout + applied.stderr)] {
            #expect(!text.contains(secret), "the secret is in the \(place)")
            #expect(!text.contains(String(secret.dropFirst("pgk_live_".count + 4))), "the secret's hidden part is in the \(place)")
        }
        let again = try await fixture.ctl(["apply", "-f", state, "--secrets-out", secrets], environment: ["ENVIRONMENT": "prod"])
        #expect(again.status == 0 && again.stdout.contains("No changes"), "matched by name within its partner: \(again)")
    }

    /// Each file of the generated set is refused by diff (exit 2) and apply (exit 64) with
    /// its file, line and field; Redis holds the same bytes afterwards.
    @Test func everyInvalidFileIsRefusedAndRedisIsUntouched() async throws {
        let fixture = try await StateFixture()
        try await Self.seed(fixture)
        let before = try await fixture.redisDigest()
        for invalid in InvalidStateFiles.all {
            let path = try fixture.write("bad.yaml", invalid.text)
            let place = "\(path):\(invalid.line):"
            let applied = try await fixture.ctl(["apply", "-f", path, "--secrets-out", fixture.folder.path("secrets"), "--prune", "--yes"])
            #expect(applied.status == 64, "\(invalid.name): \(applied)")
            #expect(applied.stderr.contains(place) && applied.stderr.contains(invalid.says), "\(invalid.name): \(applied)")
            #expect(invalid.field.isEmpty || applied.stderr.contains("\(invalid.field): "), "\(invalid.name): \(applied)")
            #expect(applied.stdout.isEmpty, "\(invalid.name): nothing planned")
            let diffed = try await fixture.ctl(["diff", "-f", path])
            #expect(diffed.status == 2 && diffed.stderr.contains(place), "\(invalid.name): \(diffed)")
        }
        #expect(try await fixture.redisDigest() == before, "Redis is byte-identical")
    }

    @Test func pruneRemovesWhatTheFilesDoNotNameOnlyAfterConfirmation() async throws {
        let fixture = try await StateFixture()
        try await Self.seed(fixture)
        let state = try fixture.write("state.yaml", try await fixture.succeed("export").stdout)
        let partnerID = try await Self.partnerID(fixture, "NammaYatri")
        let extra = try await fixture.succeed("keys", "create", "--partner", partnerID, "--name", "by-hand", "-o", "json").object()
        let extraID = try #require(extra["key_id"] as? String)
        let invited = try await fixture.succeed(
            "members", "create", "--partner", partnerID, "--email", "invited@nammayatri.example", "--name", "Invited", "--role", "viewer", "-o", "json"
        ).object()
        let invitedID = try #require(invited["member_id"] as? String)

        let kept = try await fixture.ctl(["apply", "-f", state])
        #expect(kept.status == 0 && kept.stdout.contains("No changes"), "\(kept)")
        #expect(kept.stderr.contains("note: 2 not in the files and kept (--prune would remove them): key \"by-hand\" (\(extraID))"), "\(kept)")
        #expect(kept.stderr.contains("member invited@nammayatri.example (\(invitedID))"), "\(kept)")
        #expect(try await Self.status(fixture, extraID) == "active", "without --prune nothing is removed")
        #expect(try await Self.members(fixture, partnerID).contains { $0["member_id"] as? String == invitedID })

        let unconfirmed = try await fixture.ctl(["apply", "-f", state, "--prune"])
        #expect(unconfirmed.status == 64 && unconfirmed.stderr.contains("pass --yes"), "\(unconfirmed)")
        let declined = try await Ctl.runOnTerminal(["apply", "-f", state, "--prune"], adminURL: fixture.gateway.adminURL, token: GatewayProcess.adminToken, answer: "n\n")
        #expect(declined.status == 4, "\(declined)")
        #expect(try await Self.status(fixture, extraID) == "active")

        let entries = try await fixture.auditEntries()
        let confirmed = try await Ctl.runOnTerminal(["apply", "-f", state, "--prune"], adminURL: fixture.gateway.adminURL, token: GatewayProcess.adminToken, answer: "y\n")
        #expect(confirmed.status == 0, "\(confirmed)")
        #expect(confirmed.stdout.contains("- key \"by-hand\" (\(extraID)) of partner \"NammaYatri\""), "\(confirmed)")
        #expect(confirmed.stdout.contains("- member invited@nammayatri.example (\(invitedID)) of partner \"NammaYatri\""), "\(confirmed)")
        #expect(try await Self.status(fixture, extraID) == "revoked")
        let left = try await Self.members(fixture, partnerID).compactMap { $0["email"] as? String }
        #expect(left == ["asha@nammayatri.example", "ravi@nammayatri.example"], "the member not named is removed, the others stay")
        #expect(try await fixture.auditEntries() == entries + 2, "one key and one member removed, nothing else")
        #expect(try await fixture.ctl(["diff", "-f", state, "--prune"]).status == 0)
    }

    static func partnerID(_ fixture: StateFixture, _ name: String) async throws -> String {
        let page = try await fixture.succeed("partners", "list", "-o", "json").object()
        let partner = try #require((page["items"] as? [[String: Any]])?.first { $0["name"] as? String == name })
        return try #require(partner["partner_id"] as? String)
    }

    static func members(_ fixture: StateFixture, _ partnerID: String) async throws -> [[String: Any]] {
        let page = try await fixture.succeed("members", "list", "--partner", partnerID, "-o", "json").object()
        return try #require(page["items"] as? [[String: Any]])
    }

    static func member(_ fixture: StateFixture, _ partnerID: String, _ email: String) async throws -> String {
        try #require(try await members(fixture, partnerID).first { $0["email"] as? String == email }?["member_id"] as? String)
    }

    static func status(_ fixture: StateFixture, _ keyID: String) async throws -> String? {
        try await fixture.succeed("keys", "get", keyID, "-o", "json").object()["status"] as? String
    }
}
