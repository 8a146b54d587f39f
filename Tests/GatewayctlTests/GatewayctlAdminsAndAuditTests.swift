import Foundation
import Testing
import TestSupport

/// `gatewayctl admins`, `audit verify|export` and `users erase` against real gateways.
@Suite("gatewayctl: admin credentials, the audit chain, erasure", .realProcesses)
struct GatewayctlAdminsAndAuditTests {
    static func ctl(_ gateway: GatewayProcess, _ arguments: [String], token: String? = GatewayProcess.adminToken, environment: [String: String] = [:]) async throws -> CtlResult {
        try await Ctl.run(arguments, adminURL: gateway.adminURL, token: token, environment: environment)
    }

    /// 1,000 audited calls through two instances at once make one chain that verifies; an
    /// entry changed or deleted in Redis is named by `audit verify`.
    @Test func verifyPassesOnAConcurrentTrailAndNamesATamperedEntry() async throws {
        let redis = try await RedisServer()
        let yaml = "redis:\n  url: \(redis.url)\n  timeout: \(GatewayProcess.redisTimeout)\notp:\n  mode: uat\n"
        let gateways = [try await GatewayProcess(yaml: yaml), try await GatewayProcess(yaml: yaml)]
        // users.find is audited even when nobody has the phone: a cheap audited call.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<20 {
                group.addTask {
                    for index in stride(from: worker, to: 1000, by: 20) {
                        let answer = try await DriverAPI.admin(gateways[index % 2], .POST, "/v1/users/find", body: #"{"phone": "9000000000"}"#)
                        #expect(answer.status == 404)
                    }
                }
            }
            try await group.waitForAll()
        }
        let verified = try await Self.ctl(gateways[1], ["audit", "verify", "--json"])
        #expect(verified.status == 0, "\(verified)")
        let report = try verified.object()
        #expect(report["status"] as? String == "intact" && report["entries"] as? Int == 1000 && report["head_seq"] as? Int == 1000, "\(report)")

        let ids = try await redis.cli("XRANGE", "pg:audit", "-", "+").split(separator: "\n").filter { $0.contains("-") && $0.first?.isNumber == true }
        // XRANGE prints each id, then its fields; the ids are what look like `ms-seq`.
        let entryIDs = ids.map(String.init).filter { $0.split(separator: "-").count == 2 && $0.split(separator: "-").allSatisfy { $0.allSatisfy(\.isNumber) } }
        try #require(entryIDs.count == 1000, "\(entryIDs.count) ids")

        // Changed in place (the stream rewritten with one field altered): named as changed.
        try await Self.rewrite(redis, id: entryIDs[699], field: "actor", value: "someone-else")
        let changed = try await Self.ctl(gateways[0], ["audit", "verify"])
        #expect(changed.status == 1, "\(changed)")
        #expect(changed.stderr.contains("entry #700 (\(entryIDs[699])) was changed"), "\(changed)")
        try await Self.rewrite(redis, id: entryIDs[699], field: "actor", value: "root")
        #expect(try await Self.ctl(gateways[0], ["audit", "verify"]).status == 0)

        // Deleted: named as removed.
        #expect(try await redis.cli("XDEL", "pg:audit", entryIDs[499]) == "1")
        let removed = try await Self.ctl(gateways[0], ["audit", "verify"])
        #expect(removed.status == 1 && removed.stderr.contains("entry #500 was removed"), "\(removed)")

        // Export: JSON lines, oldest first, every field.
        let export = try await Self.ctl(gateways[1], ["audit", "export", "--from", "2000-01-01T00:00:00Z", "--to", "2100-01-01T00:00:00Z"])
        #expect(export.status == 0, "\(export)")
        let lines = export.stdout.split(separator: "\n")
        #expect(lines.count == 999)
        let first = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(first["seq"] as? Int == 1 && (first["hash"] as? String)?.count == 64 && first["prev_hash"] as? String == "")
        let none = try await Self.ctl(gateways[1], ["audit", "export", "--to", "2000-01-01T00:00:00Z"])
        #expect(none.status == 0 && none.stdout.isEmpty, "\(none)")
    }

    /// Rewrites the audit stream with the same ids, one entry's field set to `value`.
    static func rewrite(_ redis: RedisServer, id: String, field: String, value: String) async throws {
        try await redis.cli("EVAL", """
            local all = redis.call('XRANGE', KEYS[1], '-', '+')
            redis.call('DEL', KEYS[1])
            for _, entry in ipairs(all) do
              local fields = entry[2]
              if entry[1] == ARGV[1] then
                for i = 1, #fields, 2 do if fields[i] == ARGV[2] then fields[i + 1] = ARGV[3] end end
              end
              redis.call('XADD', KEYS[1], entry[1], unpack(fields))
            end
            return #all
            """, "1", "pg:audit", id, field, value)
    }

    @Test func adminsCommandsAndAPersonalCredentialInAProfile() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: "redis:\n  url: \(redis.url)\n  timeout: \(GatewayProcess.redisTimeout)\notp:\n  mode: uat\n")
        let folder = try TemporaryFolder("gatewayctl-admins")
        defer { withExtendedLifetime(folder) {} }
        let home = folder.url
        try FileManager.default.createDirectory(at: home.appendingPathComponent("gatewayctl"), withIntermediateDirectories: true)
        let tokenFile = home.appendingPathComponent("gatewayctl/asha.token").path

        let created = try await Self.ctl(gateway, ["admins", "create", "--name", "asha", "--role", "support", "--expires-in", "90d", "--token-file", tokenFile, "--json"])
        #expect(created.status == 0, "\(created)")
        let adminID = try #require(try created.object()["admin_id"] as? String)
        let token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("pga_live_") && !created.stdout.contains(token))
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: tokenFile)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        #expect(try await Self.ctl(gateway, ["admins", "create", "--name", "x", "--role", "owner", "--token-file", tokenFile]).status == 64)

        // A profile holds the personal credential; support may find users but not create partners.
        try "profiles:\n  support:\n    url: \(gateway.adminURL)\n    token_file: asha.token\n".write(
            toFile: home.appendingPathComponent("gatewayctl/config.yaml").path, atomically: true, encoding: .utf8)
        let profile = ["XDG_CONFIG_HOME": home.path]
        let login = try await DriverAPI.login(gateway, phone: "9876543210")
        let listed = try await Self.ctl(gateway, ["--profile", "support", "sessions", "list", "--user", login.userID, "--json"], token: nil, environment: profile)
        #expect(listed.status == 0, "\(listed)")
        let refused = try await Self.ctl(gateway, ["--profile", "support", "partners", "create", "--name", "x"], token: nil, environment: profile)
        #expect(refused.status == 1 && refused.stderr.contains("FORBIDDEN"), "\(refused)")

        // Erase asks first; with --yes it erases, as the support credential.
        let unconfirmed = try await Self.ctl(gateway, ["--profile", "support", "users", "erase", login.userID], token: nil, environment: profile)
        #expect(unconfirmed.status == 64, "\(unconfirmed)")
        let erased = try await Self.ctl(gateway, ["--profile", "support", "users", "erase", login.userID, "--yes", "--json"], token: nil, environment: profile)
        #expect(erased.status == 0, "\(erased)")
        #expect(try erased.object()["user_id"] as? String == login.userID)
        let entries = try await Self.ctl(gateway, ["audit", "--limit", "3", "--json"])
        let newest = try #require((try entries.object()["items"] as? [[String: Any]])?.first)
        #expect(newest["action"] as? String == "user.erase" && newest["actor"] as? String == "asha" && newest["actor_id"] as? String == adminID)

        let list = try await Self.ctl(gateway, ["admins", "list", "--json"])
        let admins = try #require(try list.object()["items"] as? [[String: Any]])
        #expect(admins.map { $0["name"] as? String } == ["asha"])
        let rotated = try await Self.ctl(gateway, ["admins", "rotate", adminID, "--json"])
        let newToken = try #require(try rotated.object()["token"] as? String)
        #expect(newToken != token)
        #expect(try await Self.ctl(gateway, ["--profile", "support", "sessions", "list", "--user", login.userID], token: nil, environment: profile).status == 3)
        #expect(try await Self.ctl(gateway, ["admins", "revoke", adminID, "--yes"]).status == 0)
        #expect(try await Self.ctl(gateway, ["admins", "revoke", adminID, "--yes"]).status == 1)
        #expect(try await Self.ctl(gateway, ["sessions", "list", "--user", login.userID], token: newToken).status == 3)
    }

    /// With the audit trail unwritable, a create or rotation is still made and answered `503
    /// AUDIT_UNAVAILABLE`; the command prints the secret that answer carries, since no other
    /// shows it, and fails.
    @Test func aSecretMadeWithoutItsAuditEntryIsShownAndTheCommandFails() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: "redis:\n  url: \(redis.url)\n  timeout: \(GatewayProcess.redisTimeout)\notp:\n  mode: uat\n")
        let partner = try await Self.ctl(gateway, ["partners", "create", "--name", "Unaudited", "--json"])
        let partnerID = try #require(try partner.object()["partner_id"] as? String)
        let admin = try await Self.ctl(gateway, ["admins", "create", "--name", "ravi", "--role", "operator", "--json"])
        let adminID = try #require(try admin.object()["admin_id"] as? String)
        // The trail's stream as another type: every append fails, nothing else does.
        _ = try await redis.cli("DEL", "pg:audit")
        _ = try await redis.cli("SET", "pg:audit", "not a stream")

        let created = try await Self.ctl(gateway, ["keys", "create", "--partner", partnerID, "--json"])
        #expect(created.status == 1 && created.stderr.contains("AUDIT_UNAVAILABLE"), "\(created)")
        let key = try #require(try created.object()["key"] as? String)
        let rotated = try await Self.ctl(gateway, ["keys", "rotate", try #require(try created.object()["key_id"] as? String)])
        #expect(rotated.status == 1 && rotated.stderr.contains("AUDIT_UNAVAILABLE"), "\(rotated)")
        let newKey = try #require(rotated.stdout.split(separator: "\n").first { $0.hasPrefix("key: ") }?.dropFirst(5))
        #expect(newKey.hasPrefix("pgk_live_") && newKey != key)
        let found = try await Ctl.run(["keys", "find", "--json"], adminURL: gateway.adminURL, token: GatewayProcess.adminToken, stdin: String(newKey))
        #expect(found.status == 0, "\(found)")

        let token = try await Self.ctl(gateway, ["admins", "rotate", adminID, "--json"])
        #expect(token.status == 1 && token.stderr.contains("AUDIT_UNAVAILABLE"), "\(token)")
        let secret = try #require(try token.object()["token"] as? String)
        #expect(try await Self.ctl(gateway, ["partners", "list"], token: secret).status == 0, "the rotated token is the one that works")
    }

    /// A wiped trail begun again verifies on its own; `--anchor` with the head an earlier
    /// verify printed catches it.
    @Test func anAnchorFromAnEarlierVerifyCatchesAWipedTrail() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: "redis:\n  url: \(redis.url)\n  timeout: \(GatewayProcess.redisTimeout)\notp:\n  mode: uat\n")
        for name in ["A", "B", "C"] { #expect(try await Self.ctl(gateway, ["partners", "create", "--name", name]).status == 0) }
        let first = try await Self.ctl(gateway, ["audit", "verify"])
        #expect(first.status == 0, "\(first)")
        let anchor = try #require(first.stdout.split(separator: "\n").first { $0.hasPrefix("keep for the next verify: --anchor ") }?.split(separator: " ").last)
        #expect(anchor.hasPrefix("3:"))
        let held = try await Self.ctl(gateway, ["audit", "verify", "--anchor", String(anchor)])
        #expect(held.status == 0 && held.stdout.contains("chain verified from #1 to #3, holding anchor #3"), "\(held)")

        _ = try await redis.cli("DEL", "pg:audit")
        for name in ["D", "E", "F", "G"] { #expect(try await Self.ctl(gateway, ["partners", "create", "--name", name]).status == 0) }
        #expect(try await Self.ctl(gateway, ["audit", "verify"]).status == 0, "without an anchor the new chain verifies")
        let caught = try await Self.ctl(gateway, ["audit", "verify", "--anchor", String(anchor)])
        #expect(caught.status == 1 && caught.stderr.contains("entry #3") && caught.stderr.contains("is not the anchor"), "\(caught)")
        #expect(try await Self.ctl(gateway, ["audit", "verify", "--anchor", "3:beef"]).status == 64)
    }
}
