import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import Testing
import TestSupport

/// `gatewayctl` against a real gateway (and its Redis), every command through the built
/// binary with `--json` parsed back. `GatewayctlLifecycleTests` covers the commands added
/// for partner updates, key lookup, confirmation, paging, output formats and profiles.
///
/// Serialized: each test starts its own redis-server and gateway, and running them all at
/// once on a small machine only makes start-up time out.
@Suite("gatewayctl against a running gateway", .serialized, .realProcesses)
struct GatewayctlEndToEndTests {
    /// A fresh Redis and gateway for one test; `ctl` runs gatewayctl against it.
    final class Fixture: Sendable {
        let redis: RedisServer
        let gateway: GatewayProcess

        init() async throws {
            redis = try await RedisServer()
            gateway = try await GatewayProcess(yaml: """
                redis:
                  url: \(redis.url)
                  timeout: \(GatewayProcess.redisTimeout)
                otp:
                  mode: uat
                """)
        }

        init(redis: RedisServer, gateway: GatewayProcess) {
            self.redis = redis
            self.gateway = gateway
        }

        func ctl(_ arguments: String..., token: String? = GatewayProcess.adminToken, stdin: String? = nil, environment: [String: String] = [:]) async throws -> CtlResult {
            try await Ctl.run(arguments, adminURL: gateway.adminURL, token: token, stdin: stdin, environment: environment)
        }

        /// Runs a command that must succeed and returns its JSON document.
        func json(_ arguments: String...) async throws -> Any {
            let result = try await Ctl.run(arguments + ["--json"], adminURL: gateway.adminURL, token: GatewayProcess.adminToken)
            try #require(result.status == 0, "\(result)")
            #expect(result.stderr.isEmpty, "\(result)")
            return try result.json()
        }

        func object(_ arguments: String...) async throws -> [String: Any] {
            let value = try await Ctl.run(arguments + ["--json"], adminURL: gateway.adminURL, token: GatewayProcess.adminToken)
            try #require(value.status == 0, "\(value)")
            return try value.object()
        }

        /// A list command's page: `{"items": [...], "next_cursor": ...}`.
        func page(_ arguments: [String]) async throws -> (items: [[String: Any]], next: String?) {
            let value = try await Ctl.run(arguments + ["--json"], adminURL: gateway.adminURL, token: GatewayProcess.adminToken)
            try #require(value.status == 0, "\(value)")
            let page = try value.object()
            #expect(Set(page.keys) == ["items", "next_cursor"], "\(value)")
            return (try #require(page["items"] as? [[String: Any]], "\(value)"), page["next_cursor"] as? String)
        }

        /// A list command's items (its first page).
        func array(_ arguments: String...) async throws -> [[String: Any]] {
            try await page(arguments).items
        }

        func createPartner(_ name: String) async throws -> String {
            let partner = try await object("partners", "create", "--name", name)
            return try #require(partner["partner_id"] as? String)
        }

        func createKey(partner: String) async throws -> [String: Any] {
            try await object("keys", "create", "--partner", partner)
        }

        func key(_ keyID: String, of partner: String) async throws -> [String: Any] {
            let keys = try await array("keys", "list", "--partner", partner)
            return try #require(keys.first { $0["key_id"] as? String == keyID }, "\(keyID) not in keys list")
        }
    }

    // MARK: Partners

    @Test func partnersCreateWithDefaults() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.object("partners", "create", "--name", "NammaYatri")
        #expect(Set(partner.keys) == ["partner_id", "name", "status", "scopes", "rate_limit", "created_at", "allowed_cidrs", "quota", "max_keys", "revision"])
        #expect((partner["partner_id"] as? String)?.hasPrefix("ptr_") == true)
        #expect(partner["name"] as? String == "NammaYatri")
        #expect(partner["status"] as? String == "active")
        #expect(partner["scopes"] as? [String] == ["sdk_tokens:mint"])
        let limit = try #require(partner["rate_limit"] as? [String: Any])
        #expect((limit["rate"] as? NSNumber)?.doubleValue == 50)
        #expect((limit["burst"] as? NSNumber)?.intValue == 100)
        #expect(Self.isTime(partner["created_at"]))
    }

    @Test func partnersCreateWithRateBurstAndScopes() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.object(
            "partners", "create", "--name", "Explicit", "--rate", "5", "--burst", "10", "--scopes", "sdk_tokens:mint,rides:read"
        )
        #expect(partner["scopes"] as? [String] == ["sdk_tokens:mint", "rides:read"])
        let limit = try #require(partner["rate_limit"] as? [String: Any])
        #expect((limit["rate"] as? NSNumber)?.doubleValue == 5)
        #expect((limit["burst"] as? NSNumber)?.intValue == 10)
    }

    @Test func partnersListDisableAndEnable() async throws {
        let fixture = try await Fixture()
        let first = try await fixture.createPartner("First")
        let second = try await fixture.createPartner("Second")

        let listed = try await fixture.array("partners", "list")
        #expect(Set(listed.compactMap { $0["partner_id"] as? String }) == [first, second])
        // Oldest first; partners created within the same second may come in either order.
        let created = listed.compactMap { $0["created_at"] as? String }
        #expect(created == created.sorted(), "oldest first")

        let disabled = try await fixture.object("partners", "disable", second, "--yes")
        #expect(disabled["partner_id"] as? String == second)
        #expect(disabled["status"] as? String == "disabled")
        let enabled = try await fixture.object("partners", "enable", second)
        #expect(enabled["status"] as? String == "active")
    }

    @Test func tableModeShowsThePartner() async throws {
        let fixture = try await Fixture()
        _ = try await fixture.createPartner("TableCo")
        let result = try await fixture.ctl("partners", "list")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("TableCo"))
        #expect(result.stdout.contains("PARTNER ID"))
        #expect((try? result.json()) == nil, "a table, not JSON")
    }

    // MARK: Keys

    @Test func keysCreateShowsTheKeyOnceAndListNeverDoes() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.createPartner("Keyed")

        let plain = try await fixture.createKey(partner: partner)
        #expect(Set(plain.keys) == ["key_id", "partner_id", "key", "start", "name", "meta", "scopes", "created_at", "expires_at"])
        #expect((plain["key"] as? String)?.hasPrefix("pgk_live_") == true)
        #expect(plain["partner_id"] as? String == partner)
        #expect(plain["scopes"] as? [String] == ["sdk_tokens:mint"], "defaults to the partner's scopes")
        #expect(plain["expires_at"] is NSNull)

        let expiring = try await fixture.object("keys", "create", "--partner", partner, "--expires-in", "90d")
        let expiresAt = try #require(Self.time(expiring["expires_at"]))
        #expect(abs(expiresAt.timeIntervalSinceNow - 90 * 86_400) < 3_600)

        let result = try await fixture.ctl("keys", "list", "--partner", partner, "--json")
        #expect(result.status == 0, "\(result)")
        for secret in [plain["key"], expiring["key"]].compactMap({ $0 as? String }) {
            #expect(!result.stdout.contains(secret), "keys list shows a key")
            #expect(!result.stdout.contains(String(secret.dropFirst("pgk_live_".count))))
        }
        let keys = try #require(try result.object()["items"] as? [[String: Any]])
        #expect(keys.count == 2)
        for key in keys {
            #expect(Set(key.keys) == ["key_id", "partner_id", "start", "name", "meta", "status", "scopes", "created_at", "expires_at", "last_used_at", "allowed_cidrs", "quota", "revision"])
            #expect(key["status"] as? String == "active")
        }
    }

    @Test func keysCreateInTableModeSaysTheKeyIsShownOnce() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.createPartner("Once")
        let result = try await fixture.ctl("keys", "create", "--partner", partner)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("pgk_live_"))
        #expect(result.stdout.contains("store it now: it is not shown again"))
    }

    @Test func keysRotateWithGraceAndWithout() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.createPartner("Rotating")
        let original = try #require(try await fixture.createKey(partner: partner)["key_id"] as? String)

        let rotated = try await fixture.object("keys", "rotate", original, "--grace", "24h")
        #expect(Set(rotated.keys) == ["key_id", "key", "start", "previous_key_id", "previous_key_expires_at"])
        #expect(rotated["previous_key_id"] as? String == original)
        #expect((rotated["key"] as? String)?.hasPrefix("pgk_live_") == true)
        let graceEnd = try #require(Self.time(rotated["previous_key_expires_at"]))
        #expect(abs(graceEnd.timeIntervalSinceNow - 86_400) < 600)
        #expect(try await fixture.key(original, of: partner)["status"] as? String == "expiring")

        let successor = try #require(rotated["key_id"] as? String)
        #expect(try await fixture.key(successor, of: partner)["status"] as? String == "active")
        let immediate = try await fixture.object("keys", "rotate", successor, "--grace", "0")
        #expect(immediate["previous_key_id"] as? String == successor)
        let ended = try await fixture.key(successor, of: partner)["status"] as? String
        #expect(ended == "expired" || ended == "revoked", "--grace 0 ends the old key at once, got \(ended ?? "nil")")
    }

    @Test func keysRevoke() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.createPartner("Revoking")
        let keyID = try #require(try await fixture.createKey(partner: partner)["key_id"] as? String)
        let revoked = try await fixture.object("keys", "revoke", keyID, "--yes")
        #expect(revoked["key_id"] as? String == keyID)
        #expect(revoked["status"] as? String == "revoked")
        #expect(try await fixture.key(keyID, of: partner)["status"] as? String == "revoked")
    }

    // MARK: Sessions and audit

    @Test func sessionsRevoke() async throws {
        let fixture = try await Fixture()
        // A driver logs in (uat mode: the code is always 123456).
        let base = fixture.gateway.baseURL
        _ = try await Self.post(base + "/auth/otp/trigger", #"{"phone": "9876543210"}"#)
        let (status, login) = try await Self.post(base + "/auth/otp/verify", #"{"phone": "9876543210", "otp": "123456"}"#)
        try #require(status == 200, "\(login)")
        let userID = try #require(login["user_id"] as? String)
        let refreshToken = try #require(login["refresh_token"] as? String)

        // Not on a terminal and no --yes: nothing is revoked, a usage error (64).
        let unconfirmed = try await fixture.ctl("sessions", "revoke", "--user", userID)
        #expect(unconfirmed.status == 64, "\(unconfirmed)")
        #expect(unconfirmed.stderrLines.count == 1 && unconfirmed.stderr.contains("--yes"), "\(unconfirmed)")
        let (stillLive, _) = try await Self.post(base + "/auth/token/refresh", #"{"refresh_token": "\#(refreshToken)"}"#)
        #expect(stillLive == 200, "an unconfirmed revoke changed nothing")

        let revocation = try await fixture.object("sessions", "revoke", "--user", userID, "--yes")
        #expect(Set(revocation.keys) == ["user_id", "revoked_at"])
        #expect(revocation["user_id"] as? String == userID)
        #expect(Self.isTime(revocation["revoked_at"]))
        let (refreshStatus, _) = try await Self.post(base + "/auth/token/refresh", #"{"refresh_token": "\#(refreshToken)"}"#)
        #expect(refreshStatus == 401, "the user's tokens stopped working")

        let audit = try await fixture.array("audit", "--limit", "1")
        #expect(audit.first?["action"] as? String == "sessions.revoke")
        #expect(audit.first?["target"] as? String == userID)

        let unknown = try await fixture.ctl("sessions", "revoke", "--user", "usr_000000000000000000000000", "--yes", "--json")
        #expect(unknown.status == 1, "\(unknown)")
        #expect(unknown.stderr.contains("NOT_FOUND"), "\(unknown)")
    }

    @Test func usersFindSessionsListAndRevokeOneSession() async throws {
        let fixture = try await Fixture()
        let base = fixture.gateway.baseURL
        var logins: [[String: Any]] = []
        for _ in 0..<2 {
            _ = try await Self.post(base + "/auth/otp/trigger", #"{"phone": "9876543210"}"#)
            let (status, login) = try await Self.post(base + "/auth/otp/verify", #"{"phone": "9876543210", "otp": "123456"}"#)
            try #require(status == 200, "\(login)")
            logins.append(login)
        }
        let userID = try #require(logins[0]["user_id"] as? String)

        // The phone comes on stdin, never in argv, where ps and shell history would keep it.
        let found = try await fixture.ctl("users", "find", "--json", stdin: "9876543210\n")
        try #require(found.status == 0, "\(found)")
        let user = try found.object()
        #expect(user["user_id"] as? String == userID)
        #expect(user["live_sessions"] as? Int == 2)
        #expect(user["phone"] as? String == "******3210")
        let table = try await fixture.ctl("users", "find", stdin: "  +919876543210")
        #expect(table.status == 0 && table.stdout.contains(userID) && table.stdout.contains("LIVE SESSIONS"), "\(table)")
        let inArgv = try await fixture.ctl("users", "find", "--phone", "9876543210")
        #expect(inArgv.status == 64, "\(inArgv)")
        #expect(!inArgv.stdout.contains(userID), "\(inArgv)")
        let nothing = try await fixture.ctl("users", "find", stdin: "\n")
        #expect(nothing.status == 64 && nothing.stderr.contains("stdin"), "\(nothing)")

        let sessions = try await fixture.array("sessions", "list", "--user", userID)
        #expect(sessions.count == 2)
        let sessionID = try #require(sessions.first?["session_id"] as? String)
        #expect(sessions.allSatisfy { $0["channel"] as? String == "otp" })

        let unconfirmed = try await fixture.ctl("sessions", "revoke", "--user", userID, "--session", sessionID)
        #expect(unconfirmed.status == 64, "\(unconfirmed)")
        let revoked = try await fixture.object("sessions", "revoke", "--user", userID, "--session", sessionID, "-y")
        #expect(revoked["session_id"] as? String == sessionID)
        let audit = try await fixture.array("audit", "--limit", "1")
        #expect(audit.first?["action"] as? String == "session.revoke")
        #expect(try await fixture.array("sessions", "list", "--user", userID).map { $0["session_id"] as? String } == [sessions[1]["session_id"] as? String])
        let missing = try await fixture.ctl("users", "find", stdin: "9000000000")
        #expect(missing.status == 1 && missing.stderr.contains("NOT_FOUND"), "\(missing)")
    }

    private static func post(_ url: String, _ body: String) async throws -> (UInt, [String: Any]) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (response.status.code, (try? JSONSerialization.jsonObject(with: Data(buffer: bytes))) as? [String: Any] ?? [:])
    }

    @Test func auditShowsTheLatestActionsNewestFirst() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.createPartner("Audited")
        _ = try await fixture.object("partners", "disable", partner, "--yes")
        let keyID = try #require(try await fixture.createKey(partner: partner)["key_id"] as? String)

        let entries = try await fixture.array("audit", "--limit", "3")
        #expect(entries.count == 3)
        #expect(entries.compactMap { $0["action"] as? String } == ["key.create", "partner.disable", "partner.create"])
        #expect(entries.compactMap { $0["target"] as? String } == [keyID, partner, partner])
        for entry in entries {
            #expect(Set(entry.keys).isSuperset(of: ["at", "actor", "action", "target"]))
            #expect(entry["actor"] as? String == "root", "the break-glass token acts as root")
            #expect((entry["note"] as? String)?.contains("@") == true, "gatewayctl sends X-Admin-Actor, kept as a note")
        }
        let times = entries.compactMap { Self.time($0["at"]) }
        #expect(times.count == 3)
        #expect(times == times.sorted(by: >), "newest first")
    }

    // MARK: Failures

    @Test func aWrongTokenExitsWithThree() async throws {
        let fixture = try await Fixture()
        let result = try await fixture.ctl("partners", "list", "--json", token: "not-the-token")
        #expect(result.status == 3, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines.count == 1, "\(result)")
        #expect(result.stderr.contains("UNAUTHORIZED"))
    }

    @Test func anUnreachableGatewayExitsWithTwo() async throws {
        let nowhere = "http://127.0.0.1:\(LoopbackPort.free())"
        let result = try await Ctl.run(["partners", "list", "--json"], adminURL: nowhere, token: GatewayProcess.adminToken)
        #expect(result.status == 2, "\(result)")
        #expect(result.stderrLines.count == 1, "\(result)")
        #expect(result.stderr.contains("cannot reach the gateway at \(nowhere)"))
    }

    @Test func anUnknownPartnerExitsWithOne() async throws {
        let fixture = try await Fixture()
        let result = try await fixture.ctl("partners", "disable", "ptr_0000000000000000", "--yes", "--json")
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines.count == 1, "\(result)")
        #expect(result.stderr.contains("NOT_FOUND"))
    }

    @Test func aBadDurationIsRejectedWithoutARequest() async throws {
        let fixture = try await Fixture()
        let partner = try await fixture.createPartner("Durations")
        let keyID = try #require(try await fixture.createKey(partner: partner)["key_id"] as? String)

        let result = try await fixture.ctl("keys", "rotate", keyID, "--grace", "ten", "--json")
        #expect(result.status != 0, "\(result)")
        #expect(result.stderrLines.count == 1, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(try await fixture.key(keyID, of: partner)["status"] as? String == "active", "the key was rotated")
        let actions = try await fixture.array("audit").compactMap { $0["action"] as? String }
        #expect(!actions.contains("key.rotate"))
    }

    // MARK: Helpers

    private static func time(_ value: Any?) -> Date? {
        (value as? String).flatMap { ISO8601DateFormatter().date(from: $0) }
    }

    private static func isTime(_ value: Any?) -> Bool {
        time(value) != nil
    }
}
