import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
@testable import PartnerGateway
import Testing
import TestSupport

@Suite("Admin API: partners, keys, audit")
struct AdminAPITests {
    static let auth: HTTPFields = [.authorization: "Bearer \(GatewayProcess.adminToken)", HTTPField.Name("X-Admin-Actor")!: "alice@ops"]

    private func withAPI(_ body: @escaping @Sendable (any TestClientProtocol, RedisServer) async throws -> Void) async throws {
        let redis = try await RedisServer()
        let config = try TestConfig.load(TestConfig.yaml(redisURL: redis.url))
        GatewayMetrics.bootstrap()
        let app = Application(router: buildAdminRouter(try await GatewayDependencies(config: config, logger: Logger(label: "test"))))
        try await app.test(.router) { client in try await body(client, redis) }
    }

    private func json(_ response: TestResponse) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(buffer: response.body), options: [.fragmentsAllowed])
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
            #expect(Set(partner.keys) == ["partner_id", "name", "status", "scopes", "rate_limit", "created_at"])
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
            #expect((list as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["NammaYatri", "Other"])

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
            #expect(Set(key.keys) == ["key_id", "partner_id", "key", "scopes", "created_at", "expires_at"])
            let keyText = try #require(key["key"] as? String)
            #expect(keyText.hasPrefix("pgk_live_"))
            #expect(key["expires_at"] is String)
            let keyID = try #require(key["key_id"] as? String)

            let (_, noExpiry) = try await call(client, .post, "/v1/partners/\(partnerID)/keys")
            #expect((noExpiry as? [String: Any])?["expires_at"] is NSNull)

            let (_, listed) = try await call(client, .get, "/v1/partners/\(partnerID)/keys")
            let keys = try #require(listed as? [[String: Any]])
            #expect(keys.count == 2)
            #expect(Set(keys[0].keys) == ["key_id", "status", "scopes", "created_at", "expires_at", "last_used_at"])
            #expect(keys[0]["last_used_at"] is NSNull)

            let (rotated, rotation) = try await call(client, .post, "/v1/keys/\(keyID)/rotate", #"{"grace": "24h"}"#)
            #expect(rotated == .ok)
            let rotatedBody = try #require(rotation as? [String: Any])
            #expect(Set(rotatedBody.keys) == ["key_id", "key", "previous_key_id", "previous_key_expires_at"])
            #expect(rotatedBody["previous_key_id"] as? String == keyID)
            let newKeyID = try #require(rotatedBody["key_id"] as? String)

            let (_, afterRotation) = try await call(client, .get, "/v1/partners/\(partnerID)/keys")
            let statuses = Dictionary(uniqueKeysWithValues: (afterRotation as? [[String: Any]] ?? []).map { ($0["key_id"] as! String, $0["status"] as! String) })
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
            let entries = try #require(audit as? [[String: Any]])
            #expect(entries.compactMap { $0["action"] as? String } == ["key.revoke", "key.rotate", "key.create"])
            #expect(entries.first?["actor"] as? String == "alice@ops")
            #expect(entries.first?["target"] as? String == newKeyID)
            #expect(Set(entries.first?.keys.map { $0 } ?? []) == ["at", "actor", "action", "target", "source"])
        }
    }

    @Test(arguments: [
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
    ])
    func clientMistakesGetClearErrors(method: HTTPRequest.Method, uri: String, body: String, status: Int, code: String) async throws {
        try await withAPI { client, _ in
            let (answered, payload) = try await call(client, method, uri, body.isEmpty ? nil : body)
            #expect(Int(answered.code) == status)
            #expect(((payload as? [String: Any])?["error"] as? [String: Any])?["code"] as? String == code)
        }
    }
}
