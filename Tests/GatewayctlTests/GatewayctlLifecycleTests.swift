import Foundation
import KeyRegistry
import Testing
import TestSupport
import Yams

/// The partner and key lifecycle as an admin runs it, through the built binary against a
/// real gateway: partners get and update, named keys with metadata and a visible start,
/// finding a presented key, confirmation, paging, output formats, token files and profiles.
@Suite("gatewayctl: partner and key lifecycle", .serialized, .realProcesses)
struct GatewayctlLifecycleTests {
    typealias Fixture = GatewayctlEndToEndTests.Fixture

    // MARK: Partners

    @Test func partnersGetAndUpdate() async throws {
        let fixture = try await Fixture()
        let partnerID = try await fixture.createPartner("Before")
        let shown = try await fixture.object("partners", "get", partnerID)
        #expect(shown["name"] as? String == "Before")

        let preview = try await fixture.ctl("partners", "update", partnerID, "--burst", "7", "--dry-run", "--json")
        #expect(preview.status == 0, "\(preview)")
        #expect(preview.stderr.contains("dry run: would change burst to 7; nothing was changed"), "\(preview)")
        let afterPreview = try await fixture.object("partners", "get", partnerID)["rate_limit"] as? [String: Any]
        #expect((afterPreview?["burst"] as? NSNumber)?.intValue == 100, "a dry run changed the partner")

        let updated = try await fixture.object("partners", "update", partnerID, "--name", "After", "--rate", "2.5", "--burst", "7", "--scopes", "sdk_tokens:mint,rides:read")
        #expect(updated["name"] as? String == "After")
        #expect(updated["scopes"] as? [String] == ["sdk_tokens:mint", "rides:read"])
        let limit = try #require(updated["rate_limit"] as? [String: Any])
        #expect((limit["rate"] as? NSNumber)?.doubleValue == 2.5 && (limit["burst"] as? NSNumber)?.intValue == 7)
        #expect(try await fixture.object("partners", "get", partnerID)["name"] as? String == "After")

        let onlyBurst = try await fixture.object("partners", "update", partnerID, "--burst", "9")
        #expect(onlyBurst["name"] as? String == "After", "fields not given stay as they were")
        let audit = try await fixture.array("audit", "--limit", "2")
        #expect(audit.compactMap { $0["action"] as? String } == ["partner.update", "partner.update"])

        let unknown = try await fixture.ctl("partners", "get", "ptr_0000000000000000")
        #expect(unknown.status == 1 && unknown.stderr.contains("NOT_FOUND"), "\(unknown)")
        let nothing = try await fixture.ctl("partners", "update", partnerID)
        #expect(nothing.status == 64 && nothing.stderr.contains("nothing to change"), "\(nothing)")
    }

    // MARK: Keys

    @Test func keysHaveANameMetaAndAVisibleStart() async throws {
        let fixture = try await Fixture()
        let partnerID = try await fixture.createPartner("Named")
        let created = try await fixture.object("keys", "create", "--partner", partnerID, "--name", "checkout-backend", "--meta", "team=payments", "--meta", "env=prod")
        let key = try #require(created["key"] as? String)
        let keyID = try #require(created["key_id"] as? String)
        let start = try #require(created["start"] as? String)
        #expect(start.count == "pgk_live_".count + 4 && key.hasPrefix(start), "start is the prefix and four characters: \(start)")
        #expect(created["name"] as? String == "checkout-backend")
        #expect(created["meta"] as? [String: String] == ["team": "payments", "env": "prod"])

        let got = try await fixture.object("keys", "get", keyID)
        #expect(got["start"] as? String == start && got["name"] as? String == "checkout-backend" && got["partner_id"] as? String == partnerID)
        #expect(got["meta"] as? [String: String] == ["team": "payments", "env": "prod"])
        let listed = try await fixture.key(keyID, of: partnerID)
        #expect(listed["start"] as? String == start)

        let table = try await fixture.ctl("keys", "list", "--partner", partnerID)
        #expect(table.stdout.contains(start + "…") && table.stdout.contains("checkout-backend") && table.stdout.contains("env=prod,team=payments"), "\(table)")
        #expect(!table.stdout.contains(key))

        let plain = try await fixture.createKey(partner: partnerID)
        #expect(plain["name"] is NSNull)
        #expect((plain["meta"] as? [String: String])?.isEmpty == true)

        let badMeta = try await fixture.ctl("keys", "create", "--partner", partnerID, "--meta", "bad name=x")
        #expect(badMeta.status == 1 && badMeta.stderr.contains("INVALID_REQUEST"), "\(badMeta)")
    }

    @Test func keysFindNamesAPresentedKeyWithoutLoggingIt() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: """
            redis:
              url: \(redis.url)
              timeout: \(GatewayProcess.redisTimeout)
            otp:
              mode: uat
            log:
              level: trace
            """)
        let fixture = try await Fixture(redis: redis, gateway: gateway)
        let partnerID = try await fixture.createPartner("Leaky")
        let created = try await fixture.object("keys", "create", "--partner", partnerID, "--expires-in", "1d12h", "--name", "leaked")
        let key = try #require(created["key"] as? String)
        let keyID = try #require(created["key_id"] as? String)

        let found = try await fixture.ctl("keys", "find", "--json", stdin: "  \(key)\n")
        #expect(found.status == 0, "\(found)")
        let info = try found.object()
        #expect(info["key_id"] as? String == keyID && info["partner_id"] as? String == partnerID)
        #expect(info["status"] as? String == "active" && info["name"] as? String == "leaked")
        let expiry = try #require((info["expires_at"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) })
        #expect(abs(expiry.timeIntervalSinceNow - 36 * 3_600) < 600)
        #expect(!found.stdout.contains(key), "find never prints the key back")

        let table = try await fixture.ctl("keys", "find", stdin: key)
        #expect(table.status == 0 && table.stdout.contains(keyID), "\(table)")

        _ = try await fixture.object("keys", "revoke", keyID, "--yes")
        #expect(try await fixture.ctl("keys", "find", "--json", stdin: key).object()["status"] as? String == "revoked")

        let unknown = try await fixture.ctl("keys", "find", stdin: APIKey.generate().text)
        #expect(unknown.status == 1 && unknown.stderr.contains("NOT_FOUND"), "\(unknown)")
        // A checksum character changed (to one it is not), so the key fails its own check.
        let malformed = try await fixture.ctl("keys", "find", stdin: String(key.dropLast()) + (key.last == "x" ? "y" : "x"))
        #expect(malformed.status == 1 && malformed.stderr.contains("INVALID_REQUEST"), "\(malformed)")
        let empty = try await fixture.ctl("keys", "find", stdin: "\n")
        #expect(empty.status == 64, "\(empty)")

        // The key reached neither the gateway's log (at trace level) nor the audit trail.
        let audit = try await fixture.ctl("audit", "--json", "--limit", "1000")
        #expect(!audit.stdout.contains(key) && !audit.stdout.contains(String(key.dropFirst("pgk_live_".count))))
        #expect(!audit.stdout.contains("key.find"), "a lookup is not an action")
        // The access log is buffered (flushed every second): wait for the lookups' lines.
        try await eventually { gateway.log.contains("/v1/keys/find") }
        let log = gateway.log
        #expect(!log.contains(String(key.dropFirst("pgk_live_".count).prefix(20))), "the key's secret is in the gateway log")
    }

    @Test func revokeAsksFirstPreviewsAndRefusesTwice() async throws {
        let fixture = try await Fixture()
        let partnerID = try await fixture.createPartner("Careful")
        let keyID = try #require(try await fixture.createKey(partner: partnerID)["key_id"] as? String)

        let unconfirmed = try await fixture.ctl("keys", "revoke", keyID)
        #expect(unconfirmed.status == 64, "\(unconfirmed)")
        #expect(unconfirmed.stderr.contains("--yes") && unconfirmed.stderrLines.count == 1, "\(unconfirmed)")
        #expect(try await fixture.key(keyID, of: partnerID)["status"] as? String == "active")

        let preview = try await fixture.ctl("keys", "revoke", keyID, "--dry-run")
        #expect(preview.status == 0 && preview.stdout.contains(keyID) && preview.stdout.contains("dry run: would revoke"), "\(preview)")
        #expect(try await fixture.key(keyID, of: partnerID)["status"] as? String == "active")

        let revoked = try await fixture.object("keys", "revoke", keyID, "--yes")
        #expect(revoked["status"] as? String == "revoked")
        let again = try await fixture.ctl("keys", "revoke", keyID, "--yes")
        #expect(again.status == 1, "\(again)")
        #expect(again.stderr.contains("already revoked") && again.stderr.contains("CONFLICT"), "\(again)")
        let actions = try await fixture.array("audit").compactMap { $0["action"] as? String }
        #expect(actions.filter { $0 == "key.revoke" }.count == 1, "one revocation, one audit entry: \(actions)")

        let disable = try await fixture.ctl("partners", "disable", partnerID)
        #expect(disable.status == 64, "\(disable)")
        let disablePreview = try await fixture.ctl("partners", "disable", partnerID, "--dry-run", "-o", "json")
        #expect(disablePreview.status == 0, "\(disablePreview)")
        #expect(try disablePreview.object()["status"] as? String == "active", "\(disablePreview)")
        #expect(disablePreview.stderr.contains("dry run"), "the note goes to stderr in JSON mode")
        #expect(try await fixture.object("partners", "get", partnerID)["status"] as? String == "active")
    }

    @Test func onATerminalRevokeAndDisableAskFirst() async throws {
        let fixture = try await Fixture()
        let partnerID = try await fixture.createPartner("Asked")
        let created = try await fixture.object("keys", "create", "--partner", partnerID, "--name", "asked-key")
        let keyID = try #require(created["key_id"] as? String)
        let start = try #require(created["start"] as? String)
        let url = fixture.gateway.adminURL

        let declined = try await Ctl.runOnTerminal(["keys", "revoke", keyID], adminURL: url, token: GatewayProcess.adminToken, answer: "n\n")
        #expect(declined.status == 4, "\(declined)")
        #expect(declined.stdout.contains("Revoke key \(keyID) (\(start)…, asked-key)") && declined.stdout.contains("[y/N]"), "\(declined)")
        #expect(declined.stdout.contains("cancelled: nothing was changed"), "\(declined)")
        #expect(try await fixture.object("keys", "get", keyID)["status"] as? String == "active")

        let accepted = try await Ctl.runOnTerminal(["keys", "revoke", keyID], adminURL: url, token: GatewayProcess.adminToken, answer: "y\n")
        #expect(accepted.status == 0, "\(accepted)")
        #expect(try await fixture.object("keys", "get", keyID)["status"] as? String == "revoked")

        let disable = try await Ctl.runOnTerminal(["partners", "disable", partnerID], adminURL: url, token: GatewayProcess.adminToken, answer: "yes\n")
        #expect(disable.status == 0 && disable.stdout.contains("Disable partner \(partnerID) (Asked)?"), "\(disable)")
        #expect(try await fixture.object("partners", "get", partnerID)["status"] as? String == "disabled")
    }

    // MARK: Paging and output

    @Test func everyListPagesWithLimitAndAfter() async throws {
        let fixture = try await Fixture()
        var partners: [String] = []
        for index in 0..<5 { partners.append(try await fixture.createPartner("P\(index)")) }
        for _ in 0..<3 { _ = try await fixture.createKey(partner: partners[0]) }

        for (command, expected) in [(["partners", "list"], 5), (["keys", "list", "--partner", partners[0]], 3), (["audit"], 8)] {
            var seen: [String] = []
            var after: String?
            var pages = 0
            repeat {
                let page = try await fixture.page(command + ["--limit", "2"] + (after.map { ["--after", $0] } ?? []))
                #expect(page.items.count <= 2)
                seen += page.items.compactMap { ($0["partner_id"] ?? $0["key_id"] ?? $0["id"]) as? String }
                after = page.next
                pages += 1
            } while after != nil && pages < 10
            if command[0] == "audit" {
                #expect(seen.count == expected && Set(seen).count == expected, "\(command): \(seen)")
            } else {
                let all = try await fixture.page(command).items.compactMap { ($0["partner_id"] ?? $0["key_id"]) as? String }
                #expect(seen == all, "\(command): pages in the same stable order as one big page")
                #expect(seen.count == expected)
            }
            #expect(pages == (expected + 1) / 2)
        }

        let table = try await fixture.ctl("partners", "list", "--limit", "2")
        #expect(table.stderr.contains("more: add --after \(partners[1])"), "\(table)")
        let last = try await fixture.ctl("partners", "list", "--after", partners[3])
        #expect(last.stderr.isEmpty && last.stdout.contains(partners[4]), "\(last)")
        let stale = try await fixture.ctl("partners", "list", "--after", "ptr_0000000000000000")
        #expect(stale.status == 1 && stale.stderr.contains("INVALID_REQUEST"), "\(stale)")
    }

    @Test func yamlAndHeaderlessTables() async throws {
        let fixture = try await Fixture()
        let partnerID = try await fixture.createPartner("Yaml")
        let yaml = try await fixture.ctl("partners", "get", partnerID, "-o", "yaml")
        #expect(yaml.status == 0, "\(yaml)")
        let parsed = try #require(try Yams.load(yaml: yaml.stdout) as? [String: Any])
        #expect(parsed["partner_id"] as? String == partnerID && parsed["name"] as? String == "Yaml")
        let list = try #require(try Yams.load(yaml: try await fixture.ctl("partners", "list", "-o", "yaml").stdout) as? [String: Any])
        #expect((list["items"] as? [[String: Any]])?.count == 1)

        let rows = try await fixture.ctl("partners", "list", "--no-headers")
        #expect(!rows.stdout.contains("PARTNER ID") && rows.stdout.hasPrefix(partnerID), "\(rows)")
        let version = try await fixture.ctl("version")
        #expect(version.status == 0 && version.stdout.hasPrefix("gatewayctl ") && version.stdout.contains("commit"), "\(version)")
        #expect(try await fixture.ctl("--version").stdout == version.stdout)
    }

    // MARK: Tokens and profiles

    @Test func theTokenComesFromAFileOrAProfile() async throws {
        let fixture = try await Fixture()
        let folder = try TemporaryFolder("gatewayctl-e2e")
        defer { withExtendedLifetime(folder) {} }
        let directory = folder.path
        try FileManager.default.createDirectory(atPath: directory + "/gatewayctl", withIntermediateDirectories: true)
        let tokenFile = directory + "/gatewayctl/admin.token"
        try (GatewayProcess.adminToken + "\n").write(toFile: tokenFile, atomically: true, encoding: .utf8)

        let fromFlag = try await Ctl.run(["partners", "list", "--admin-token-file", tokenFile], adminURL: fixture.gateway.adminURL, token: nil)
        #expect(fromFlag.status == 0, "\(fromFlag)")
        let fromEnvironment = try await Ctl.run(["partners", "list"], adminURL: fixture.gateway.adminURL, token: nil, environment: ["GATEWAY_ADMIN_TOKEN_FILE": tokenFile])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment)")

        try """
            default_profile: local
            profiles:
              local:
                url: \(fixture.gateway.adminURL)
                token_file: admin.token
              elsewhere:
                url: http://127.0.0.1:\(LoopbackPort.free())
                token_file: admin.token
            """.write(toFile: directory + "/gatewayctl/config.yaml", atomically: true, encoding: .utf8)
        let byDefault = try await Ctl.run(["partners", "list", "--json"], adminURL: nil, token: nil, environment: ["XDG_CONFIG_HOME": directory])
        #expect(byDefault.status == 0, "\(byDefault)")
        let elsewhere = try await Ctl.run(["partners", "list", "--profile", "elsewhere"], adminURL: fixture.gateway.adminURL, token: nil, environment: ["XDG_CONFIG_HOME": directory])
        #expect(elsewhere.status == 2, "--profile beats GATEWAY_ADMIN_URL: \(elsewhere)")

        try "wrong-token-0123456789".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let wrong = try await Ctl.run(["partners", "list"], adminURL: nil, token: nil, environment: ["XDG_CONFIG_HOME": directory])
        #expect(wrong.status == 3 && wrong.stderr.contains("UNAUTHORIZED"), "\(wrong)")
    }
}
