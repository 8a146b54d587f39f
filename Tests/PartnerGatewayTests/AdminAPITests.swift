import Foundation
@testable import GatewayEndpoints
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KeyRegistry
import Logging
@testable import GatewayObservability
@testable import PartnerGateway
import Testing
import TestSupport

/// In process (the admin router on a real Redis). Serialized: each test runs a gateway's
/// Redis pool inside the test process, and several at once beside the other suites' clients
/// starved its 1 s command deadline on a loaded 2-core machine.
@Suite("Admin API: partners, keys, audit", .serialized, .realProcesses)
struct AdminAPITests {
    static let auth: HTTPFields = [.authorization: "Bearer \(GatewayProcess.adminToken)", HTTPField.Name("X-Admin-Actor")!: "alice@ops"]

    private func withAPI(_ body: @escaping @Sendable (any TestClientProtocol, RedisServer) async throws -> Void) async throws {
        let redis = try await RedisServer()
        let config = try TestConfig.load(TestConfig.yaml(redisURL: redis.url))
        GatewayMetrics.bootstrap()
        let dependencies = try await GatewayDependencies(config: config, logger: Logger(label: "test"))
        // Connected before the first request: on a loaded machine the first connection can
        // take longer than a command's deadline, which is not what these tests are about.
        try await eventually(timeout: .seconds(20)) { (try? await dependencies.redis.ping()) != nil }
        let app = Application(router: buildAdminRouter(dependencies))
        try await app.test(.router) { client in try await body(client, redis) }
    }

    private func json(_ response: TestResponse) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(buffer: response.body), options: [.fragmentsAllowed])
    }

    /// The items of a page answer (`{"items": [...], "next_cursor": ...}`).
    static func items(_ page: Any) -> [[String: Any]] {
        (page as? [String: Any])?["items"] as? [[String: Any]] ?? []
    }

    private func call(_ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil) async throws -> (HTTPResponse.Status, Any) {
        try await client.execute(uri: uri, method: method, headers: Self.auth, body: body.map { ByteBuffer(string: $0) }) { response in
            (response.status, try json(response))
        }
    }

    @Test func partnerLifecycle() async throws {
        try await withAPI { client, _ in
            let (status, created) = try await call(client, .post, "/v1/partners", #"{"name": "NammaYatri"}"#)
            #expect(status == .created)
            let partner = try #require(created as? [String: Any])
            #expect(Set(partner.keys) == ["partner_id", "name", "status", "scopes", "rate_limit", "created_at", "allowed_cidrs", "quota", "max_keys", "revision"])
            #expect(partner["status"] as? String == "active")
            #expect(partner["scopes"] as? [String] == ["sdk_tokens:mint"])
            let limit = try #require(partner["rate_limit"] as? [String: Any])
            #expect(limit["rate"] as? Double == 50 && limit["burst"] as? Int == 100)
            let id = try #require(partner["partner_id"] as? String)
            #expect(id.hasPrefix("ptr_"))
            #expect((partner["created_at"] as? String)?.hasSuffix("Z") == true)

            let (_, explicit) = try await call(client, .post, "/v1/partners", #"{"name": "Other", "rate": 5, "burst": 10, "scopes": ["sdk_tokens:mint", "reports:read"]}"#)
            #expect((explicit as? [String: Any])?["scopes"] as? [String] == ["sdk_tokens:mint", "reports:read"])

            let (_, list) = try await call(client, .get, "/v1/partners")
            #expect(Self.items(list).compactMap { $0["name"] as? String } == ["NammaYatri", "Other"])
            #expect((list as? [String: Any])?["next_cursor"] is NSNull)

            let (_, disabled) = try await call(client, .post, "/v1/partners/\(id)/disable")
            #expect((disabled as? [String: Any])?["status"] as? String == "disabled")
            let (_, enabled) = try await call(client, .post, "/v1/partners/\(id)/enable")
            #expect((enabled as? [String: Any])?["status"] as? String == "active")
            let (shown, _) = try await call(client, .get, "/v1/partners/\(id)")
            #expect(shown == .ok)
        }
    }

    @Test func keyLifecycleNeverShowsAStoredKey() async throws {
        try await withAPI { client, redis in
            let (_, partner) = try await call(client, .post, "/v1/partners", #"{"name": "P"}"#)
            let partnerID = try #require((partner as? [String: Any])?["partner_id"] as? String)

            let (status, created) = try await call(client, .post, "/v1/partners/\(partnerID)/keys", #"{"expires_in": "90d"}"#)
            #expect(status == .created)
            let key = try #require(created as? [String: Any])
            #expect(Set(key.keys) == ["key_id", "partner_id", "key", "start", "name", "meta", "scopes", "created_at", "expires_at"])
            let keyText = try #require(key["key"] as? String)
            #expect(keyText.hasPrefix("pgk_live_"))
            #expect(key["expires_at"] is String)
            let keyID = try #require(key["key_id"] as? String)

            let (_, noExpiry) = try await call(client, .post, "/v1/partners/\(partnerID)/keys")
            #expect((noExpiry as? [String: Any])?["expires_at"] is NSNull)

            let (_, listed) = try await call(client, .get, "/v1/partners/\(partnerID)/keys")
            let keys = Self.items(listed)
            #expect(keys.count == 2)
            #expect(Set(keys[0].keys) == ["key_id", "partner_id", "start", "name", "meta", "status", "scopes", "created_at", "expires_at", "last_used_at", "allowed_cidrs", "quota", "revision"])
            #expect(keys[0]["last_used_at"] is NSNull)

            let (rotated, rotation) = try await call(client, .post, "/v1/keys/\(keyID)/rotate", #"{"grace": "24h"}"#)
            #expect(rotated == .ok)
            let rotatedBody = try #require(rotation as? [String: Any])
            #expect(Set(rotatedBody.keys) == ["key_id", "key", "start", "previous_key_id", "previous_key_expires_at"])
            #expect(rotatedBody["previous_key_id"] as? String == keyID)
            let newKeyID = try #require(rotatedBody["key_id"] as? String)

            let (_, afterRotation) = try await call(client, .get, "/v1/partners/\(partnerID)/keys")
            let statuses = Dictionary(uniqueKeysWithValues: Self.items(afterRotation).map { ($0["key_id"] as! String, $0["status"] as! String) })
            #expect(statuses[keyID] == "expiring")
            #expect(statuses[newKeyID] == "active")

            let (revoked, revocation) = try await call(client, .post, "/v1/keys/\(newKeyID)/revoke")
            #expect(revoked == .ok)
            #expect((revocation as? [String: Any])?["status"] as? String == "revoked")
            let (conflict, conflictBody) = try await call(client, .post, "/v1/keys/\(newKeyID)/rotate")
            #expect(conflict == .conflict)
            #expect(((conflictBody as? [String: Any])?["error"] as? [String: Any])?["code"] as? String == "CONFLICT")

            // The listing and Redis never hold a key itself.
            let everything = try await redis.cli("--scan")
            #expect(!everything.contains("pgk_live_"))
            for name in everything.split(separator: "\n") where name.hasPrefix("pg:apikey:") {
                #expect(!(try await redis.cli("HGETALL", String(name))).contains(keyText))
            }

            let (_, audit) = try await call(client, .get, "/v1/audit?limit=3")
            let entries = Self.items(audit)
            #expect(entries.compactMap { $0["action"] as? String } == ["key.revoke", "key.rotate", "key.create"])
            // The break-glass token acts as root; the declared actor is only a note.
            #expect(entries.first?["actor"] as? String == "root")
            #expect(entries.first?["actor_id"] as? String == "root")
            #expect(entries.first?["note"] as? String == "alice@ops")
            #expect(entries.first?["target"] as? String == newKeyID)
            #expect(Set(entries.first?.keys.map { $0 } ?? []) == ["id", "seq", "at", "actor", "actor_id", "action", "target", "source", "note", "prev_hash", "hash"])
        }
    }

    /// Client mistakes and the response each gets: method, path, body, status, code.
    static let mistakes: [(HTTPRequest.Method, String, String, Int, String)] = [
        (HTTPRequest.Method.post, "/v1/partners", "{", 400, "INVALID_REQUEST"),
        (.post, "/v1/partners", #"{"name": 5}"#, 400, "INVALID_REQUEST"),
        (.post, "/v1/partners", #"{}"#, 400, "INVALID_REQUEST"),
        (.post, "/v1/partners", #"{"name": "x", "rate": -1}"#, 400, "INVALID_REQUEST"),
        (.post, "/v1/partners", #"{"name": "x", "scopes": ["Bad Scope!"]}"#, 400, "INVALID_REQUEST"),
        (.get, "/v1/partners/ptr_0000000000000000", "", 404, "NOT_FOUND"),
        (.get, "/v1/partners/../../etc", "", 404, "NOT_FOUND"),
        (.post, "/v1/partners/ptr_0000000000000000/keys", "", 404, "NOT_FOUND"),
        (.post, "/v1/keys/key_0000000000000000/rotate", #"{"grace": "ten"}"#, 400, "INVALID_REQUEST"),
        (.post, "/v1/keys/key_0000000000000000/rotate", "", 404, "NOT_FOUND"),
        (.post, "/v1/keys/key_0000000000000000/revoke", "", 404, "NOT_FOUND"),
        (.get, "/v1/audit?limit=0", "", 400, "INVALID_REQUEST"),
        (.get, "/v1/audit?limit=abc", "", 400, "INVALID_REQUEST"),
        (.get, "/v1/audit?after=not-an-id", "", 400, "INVALID_REQUEST"),
        (.get, "/v1/audit?after=99999999999999999999-0", "", 400, "INVALID_REQUEST"),
        (.get, "/v1/partners?limit=1001", "", 400, "INVALID_REQUEST"),
        (.get, "/v1/partners?after=ptr_0000000000000000", "", 400, "INVALID_REQUEST"),
        (.get, "/v1/partners?after=", "", 400, "INVALID_REQUEST"),
        (.patch, "/v1/partners/ptr_0000000000000000", #"{"burst": 5}"#, 404, "NOT_FOUND"),
        (.patch, "/v1/partners/ptr_0000000000000000", #"{}"#, 400, "INVALID_REQUEST"),
        (.patch, "/v1/partners/ptr_0000000000000000", #"{"burst": 0}"#, 400, "INVALID_REQUEST"),
        (.patch, "/v1/partners/ptr_0000000000000000", #"{"name": " "}"#, 400, "INVALID_REQUEST"),
        (.get, "/v1/keys/key_0000000000000000", "", 404, "NOT_FOUND"),
        (.get, "/v1/keys/nope", "", 404, "NOT_FOUND"),
        (.post, "/v1/keys/find", #"{"key": "pgk_live_short"}"#, 400, "INVALID_REQUEST"),
        (.post, "/v1/keys/find", #"{}"#, 400, "INVALID_REQUEST"),
        (.post, "/v1/keys/find", "", 400, "INVALID_REQUEST"),
        (.post, "/v1/partners/ptr_0000000000000000/keys", #"{"expires_in": "30m1h"}"#, 400, "INVALID_REQUEST"),
    ]

    /// One gateway and Redis for the whole table: a server per case made dozens start at once
    /// in this process, enough to starve them on a small machine.
    @Test func clientMistakesGetClearErrors() async throws {
        try await withAPI { client, _ in
            for (method, uri, body, status, code) in Self.mistakes {
                let (answered, payload) = try await call(client, method, uri, body.isEmpty ? nil : body)
                #expect(Int(answered.code) == status, "\(method) \(uri) \(body)")
                #expect(((payload as? [String: Any])?["error"] as? [String: Any])?["code"] as? String == code, "\(method) \(uri) \(body)")
            }
        }
    }

    /// An admin call whose audit entry cannot be written is not answered as a success: the
    /// caller hears `503 AUDIT_UNAVAILABLE` (the change, if any, was made: docs/admin-api.md,
    /// "Audit"), with the secret a create or rotation made, and a call that writes no entry is
    /// unaffected.
    @Test func anActionWhoseAuditEntryFailsIsNotASuccess() async throws {
        try await withAPI { client, redis in
            let (created, partner) = try await call(client, .post, "/v1/partners", #"{"name": "Audited"}"#)
            #expect(created == .created)
            let id = try #require((partner as? [String: Any])?["partner_id"] as? String)
            // The trail's stream as another type: every append fails, nothing else does.
            _ = try await redis.cli("DEL", "pg:audit")
            _ = try await redis.cli("SET", "pg:audit", "not a stream")
            let (status, answer) = try await call(client, .post, "/v1/partners/\(id)/disable")
            #expect(status == .serviceUnavailable, "\(answer)")
            let error = (answer as? [String: Any])?["error"] as? [String: Any]
            #expect(error?["code"] as? String == "AUDIT_UNAVAILABLE")
            #expect((error?["message"] as? String)?.contains("audit") == true)
            // A change that made a secret hands it over in the refusal: no other answer shows it.
            let (made, unaudited) = try await call(client, .post, "/v1/partners/\(id)/keys")
            #expect(made == .serviceUnavailable, "\(unaudited)")
            let refusal = try #require((unaudited as? [String: Any])?["error"] as? [String: Any])
            #expect(refusal["code"] as? String == "AUDIT_UNAVAILABLE")
            let key = try #require((refusal["result"] as? [String: Any])?["key"] as? String)
            let keyID = try #require((refusal["result"] as? [String: Any])?["key_id"] as? String)
            let (lookup, record) = try await call(client, .post, "/v1/keys/find", #"{"key": "\#(key)"}"#)
            #expect(lookup == .ok && (record as? [String: Any])?["key_id"] as? String == keyID, "the key it carried is the key made")
            let (rotation, rotated) = try await call(client, .post, "/v1/keys/\(keyID)/rotate")
            let result = ((rotated as? [String: Any])?["error"] as? [String: Any])?["result"] as? [String: Any]
            #expect(rotation == .serviceUnavailable && result?["previous_key_id"] as? String == keyID && (result?["key"] as? String)?.hasPrefix("pgk_live_") == true)
            let (found, _) = try await call(client, .post, "/v1/users/find", #"{"phone": "9876543210"}"#)
            #expect(found == .serviceUnavailable)
            let (listed, _) = try await call(client, .get, "/v1/partners")
            #expect(listed == .ok)
        }
    }

    @Test func partnerUpdateChangesOnlyWhatIsGivenAndIsAudited() async throws {
        try await withAPI { client, _ in
            let (_, created) = try await call(client, .post, "/v1/partners", #"{"name": "Before", "rate": 5, "burst": 10}"#)
            let id = try #require((created as? [String: Any])?["partner_id"] as? String)
            let (status, updated) = try await call(client, .patch, "/v1/partners/\(id)", #"{"burst": 20, "scopes": ["sdk_tokens:mint", "rides:read"]}"#)
            #expect(status == .ok)
            let partner = try #require(updated as? [String: Any])
            #expect(partner["name"] as? String == "Before")
            #expect(partner["scopes"] as? [String] == ["sdk_tokens:mint", "rides:read"])
            let limit = try #require(partner["rate_limit"] as? [String: Any])
            #expect(limit["rate"] as? Double == 5 && limit["burst"] as? Int == 20)
            let (_, renamed) = try await call(client, .patch, "/v1/partners/\(id)", #"{"name": "  After  ", "rate": 0.5}"#)
            #expect((renamed as? [String: Any])?["name"] as? String == "After")
            let (_, shown) = try await call(client, .get, "/v1/partners/\(id)")
            #expect(((shown as? [String: Any])?["rate_limit"] as? [String: Any])?["rate"] as? Double == 0.5)
            let (_, audit) = try await call(client, .get, "/v1/audit?limit=2")
            #expect(Self.items(audit).compactMap { $0["action"] as? String } == ["partner.update", "partner.update"])
            #expect(Self.items(audit).first?["target"] as? String == id)
        }
    }

    @Test func keysCarryANameMetaAndStartAndCanBeFoundByTheKeyItself() async throws {
        try await withAPI { client, _ in
            let (_, partner) = try await call(client, .post, "/v1/partners", #"{"name": "P"}"#)
            let partnerID = try #require((partner as? [String: Any])?["partner_id"] as? String)
            let (_, created) = try await call(client, .post, "/v1/partners/\(partnerID)/keys", #"{"name": "checkout", "meta": {"team": "payments"}, "expires_in": "1d12h"}"#)
            let key = try #require(created as? [String: Any])
            let keyText = try #require(key["key"] as? String)
            let keyID = try #require(key["key_id"] as? String)
            let start = try #require(key["start"] as? String)
            #expect(start == String(keyText.prefix(13)))
            #expect(key["name"] as? String == "checkout" && key["meta"] as? [String: String] == ["team": "payments"])

            let (shownStatus, shown) = try await call(client, .get, "/v1/keys/\(keyID)")
            #expect(shownStatus == .ok)
            #expect((shown as? [String: Any])?["start"] as? String == start)
            #expect((shown as? [String: Any])?["partner_id"] as? String == partnerID)

            let (foundStatus, found) = try await call(client, .post, "/v1/keys/find", #"{"key": "\#(keyText)"}"#)
            #expect(foundStatus == .ok)
            let foundKey = try #require(found as? [String: Any])
            #expect(foundKey["key_id"] as? String == keyID && foundKey["status"] as? String == "active")
            #expect(foundKey["expires_at"] is String)
            #expect(!"\(foundKey)".contains(keyText))
            let (unknown, _) = try await call(client, .post, "/v1/keys/find", #"{"key": "\#(APIKey.generate().text)"}"#)
            #expect(unknown == .notFound)

            let (_, audit) = try await call(client, .get, "/v1/audit")
            #expect(Self.items(audit).compactMap { $0["action"] as? String } == ["key.create", "partner.create"], "a lookup writes no audit entry")

            for (meta, why) in [(#"{"bad name": "x"}"#, "a space in a name"), (#"{"a": "\u0001"}"#, "a control character")] {
                let (refused, body) = try await call(client, .post, "/v1/partners/\(partnerID)/keys", #"{"meta": \#(meta)}"#)
                #expect(refused == .badRequest, "\(why): \(body)")
            }
            let tooMany = (0..<17).map { "\"k\($0)\": \"v\"" }.joined(separator: ", ")
            let (refused, _) = try await call(client, .post, "/v1/partners/\(partnerID)/keys", "{\"meta\": {\(tooMany)}}")
            #expect(refused == .badRequest)
        }
    }

    @Test func revokingARevokedKeyIsAConflictWithNoAuditEntry() async throws {
        try await withAPI { client, _ in
            let (_, partner) = try await call(client, .post, "/v1/partners", #"{"name": "P"}"#)
            let partnerID = try #require((partner as? [String: Any])?["partner_id"] as? String)
            let (_, created) = try await call(client, .post, "/v1/partners/\(partnerID)/keys")
            let keyID = try #require((created as? [String: Any])?["key_id"] as? String)
            let (first, _) = try await call(client, .post, "/v1/keys/\(keyID)/revoke")
            #expect(first == .ok)
            let (second, body) = try await call(client, .post, "/v1/keys/\(keyID)/revoke")
            #expect(second == .conflict)
            let error = try #require((body as? [String: Any])?["error"] as? [String: Any])
            #expect(error["code"] as? String == "CONFLICT")
            #expect((error["message"] as? String)?.contains("already revoked") == true)
            let (_, audit) = try await call(client, .get, "/v1/audit")
            #expect(Self.items(audit).filter { $0["action"] as? String == "key.revoke" }.count == 1)
        }
    }

    @Test func everyListPagesInAStableOrder() async throws {
        try await withAPI { client, _ in
            var partnerIDs: [String] = []
            for index in 0..<5 {
                let (_, partner) = try await call(client, .post, "/v1/partners", #"{"name": "P\#(index)"}"#)
                partnerIDs.append(try #require((partner as? [String: Any])?["partner_id"] as? String))
            }
            for _ in 0..<3 { _ = try await call(client, .post, "/v1/partners/\(partnerIDs[0])/keys") }
            for (path, idField, total) in [("/v1/partners", "partner_id", 5), ("/v1/partners/\(partnerIDs[0])/keys", "key_id", 3), ("/v1/audit", "id", 8)] {
                let (_, whole) = try await call(client, .get, path)
                let expected = Self.items(whole).compactMap { $0[idField] as? String }
                #expect(expected.count == total)
                var seen: [String] = []
                var after: String?
                repeat {
                    let (status, page) = try await call(client, .get, path + "?limit=2" + (after.map { "&after=\($0)" } ?? ""))
                    #expect(status == .ok)
                    let items = Self.items(page)
                    #expect(items.count <= 2)
                    seen += items.compactMap { $0[idField] as? String }
                    after = (page as? [String: Any])?["next_cursor"] as? String
                    if let after { #expect(after == seen.last) }
                } while after != nil && seen.count < 20
                #expect(seen == expected, "\(path) pages in the order of one big page")
            }
            // Oldest first; partners made within one millisecond are ordered by id, so the
            // check is on the creation times, not on the order the test made them in.
            let (_, all) = try await call(client, .get, "/v1/partners")
            let listed = Self.items(all)
            #expect(Set(listed.compactMap { $0["partner_id"] as? String }) == Set(partnerIDs))
            let created = listed.compactMap { $0["created_at"] as? String }
            #expect(created.count == 5 && created == created.sorted(), "\(created)")
        }
    }
}
