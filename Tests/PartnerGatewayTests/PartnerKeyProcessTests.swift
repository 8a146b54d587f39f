import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing
import TestSupport

/// Partner keys across real gateway processes sharing one Redis.
@Suite("Partner keys on two gateway instances", .realProcesses)
struct PartnerKeyProcessTests {
    struct Answer {
        let status: UInt
        let body: [String: Any]
        let headers: HTTPHeaders
        var code: String? { (body["error"] as? [String: Any])?["code"] as? String }
    }

    static func call(_ url: String, method: HTTPMethod = .GET, headers: [(String, String)] = [], body: String? = nil) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        let object = (try? JSONSerialization.jsonObject(with: Data(buffer: bytes))) as? [String: Any] ?? [:]
        return Answer(status: response.status.code, body: object, headers: response.headers)
    }

    static func admin(_ gateway: GatewayProcess, _ method: HTTPMethod, _ path: String, _ body: String? = nil) async throws -> [String: Any] {
        let answer = try await call(gateway.adminURL + path, method: method, headers: [("Authorization", "Bearer \(GatewayProcess.adminToken)")], body: body)
        #expect(answer.status < 300, "\(path): \(answer.status) \(answer.body)")
        return answer.body
    }

    static func whoami(_ gateway: GatewayProcess, key: String?) async throws -> Answer {
        try await call(gateway.baseURL + "/partner/v1/whoami", headers: key.map { [("X-API-Key", $0)] } ?? [])
    }

    @Test func rotationRevocationAndDisableReachEveryInstance() async throws {
        let redis = try await RedisServer()
        let yaml = "redis:\n  url: \(redis.url)\n  timeout: \(GatewayProcess.redisTimeout)\notp:\n  mode: uat\n"
        let first = try await GatewayProcess(yaml: yaml)
        let second = try await GatewayProcess(yaml: yaml)

        let partner = try await Self.admin(first, .POST, "/v1/partners", #"{"name": "NammaYatri"}"#)
        let partnerID = try #require(partner["partner_id"] as? String)
        let created = try await Self.admin(first, .POST, "/v1/partners/\(partnerID)/keys")
        let oldKey = try #require(created["key"] as? String)
        let oldKeyID = try #require(created["key_id"] as? String)

        // Both instances accept it (and now hold it in their caches).
        for gateway in [first, second] {
            let answer = try await Self.whoami(gateway, key: oldKey)
            #expect(answer.status == 200)
            #expect(answer.body["partner_id"] as? String == partnerID)
        }

        // Rotate with --grace 0 on the first instance: the second refuses the old key within 1 s.
        let rotated = try await Self.admin(first, .POST, "/v1/keys/\(oldKeyID)/rotate", #"{"grace": "0s"}"#)
        let newKey = try #require(rotated["key"] as? String)
        let newKeyID = try #require(rotated["key_id"] as? String)
        let rotation = try await eventually(timeout: .seconds(1), interval: .milliseconds(5)) {
            try await Self.whoami(second, key: oldKey).status == 401
        }
        print("zero-grace rotation honoured by the second instance after \(rotation)")
        let refused = try await Self.whoami(second, key: oldKey)
        #expect(refused.code == "INVALID_API_KEY")
        #expect(try await Self.whoami(second, key: newKey).status == 200)

        // Disable the partner on the second instance: the first responses 403.
        _ = try await Self.admin(second, .POST, "/v1/partners/\(partnerID)/disable")
        try await eventually(timeout: .seconds(1), interval: .milliseconds(5)) {
            try await Self.whoami(first, key: newKey).code == "FORBIDDEN"
        }
        _ = try await Self.admin(second, .POST, "/v1/partners/\(partnerID)/enable")
        try await eventually(timeout: .seconds(1), interval: .milliseconds(5)) {
            try await Self.whoami(first, key: newKey).status == 200
        }

        // Revoke on the first instance: the second refuses within 1 s, and from then on always.
        _ = try await Self.admin(first, .POST, "/v1/keys/\(newKeyID)/revoke")
        let revocation = try await eventually(timeout: .seconds(1), interval: .milliseconds(5)) {
            try await Self.whoami(second, key: newKey).status == 401
        }
        print("revocation honoured by the second instance after \(revocation)")
        // (Repeated failures from one IP soon get 429 from the brute-force limit instead.)
        for _ in 0..<20 {
            #expect([401, 429].contains(try await Self.whoami(first, key: newKey).status))
            #expect([401, 429].contains(try await Self.whoami(second, key: newKey).status))
        }

        // The key never reached a log.
        for gateway in [first, second] {
            #expect(!gateway.log.contains(oldKey))
            #expect(!gateway.log.contains(newKey))
        }
    }

    /// A partner's keep-alive connection to an `api_key` route: the gateway remembers a key's
    /// verification per connection, so a revocation made on another instance must refuse the
    /// next requests on that very connection as soon as it has arrived.
    @Test func aRevokedKeyIsRefusedOnTheKeepAliveConnectionThatUsedIt() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let yaml = "redis:\n  url: \(redis.url)\n  timeout: \(GatewayProcess.redisTimeout)\notp:\n  mode: uat\nroutes:\n  - {name: orders, path_prefix: /orders, upstream: \(upstream.url), auth: api_key}\n"
        let first = try await GatewayProcess(yaml: yaml)
        let second = try await GatewayProcess(yaml: yaml)
        let partner = try await Self.admin(first, .POST, "/v1/partners", #"{"name": "KeepAlive"}"#)
        let partnerID = try #require(partner["partner_id"] as? String)
        let created = try await Self.admin(first, .POST, "/v1/partners/\(partnerID)/keys")
        let key = try #require(created["key"] as? String)
        let keyID = try #require(created["key_id"] as? String)

        let connection = try KeepAliveClient(port: second.port)
        defer { connection.close() }
        let request = "GET /orders/1 HTTP/1.1\r\nHost: x\r\nX-API-Key: \(key)\r\n\r\n"
        for _ in 0..<3 {
            let answer = await connection.send(request)
            #expect(answer.hasPrefix("HTTP/1.1 200 "), "\(answer)")
        }
        _ = try await Self.admin(first, .POST, "/v1/keys/\(keyID)/revoke")
        let revocation = try await eventually(timeout: .seconds(1), interval: .milliseconds(5)) {
            await connection.send(request).hasPrefix("HTTP/1.1 401 ")
        }
        print("revocation honoured on a keep-alive connection after \(revocation)")
        // (Repeated failures from one address soon get 429 from the brute-force limit instead.)
        for _ in 0..<5 {
            let answer = await connection.send(request)
            #expect(answer.hasPrefix("HTTP/1.1 401 ") || answer.hasPrefix("HTTP/1.1 429 "), "\(answer)")
        }
    }

    @Test func missingMalformedAndBruteForcedKeys() async throws {
        let redis = try await RedisServer()
        let yaml = """
        redis:
          url: \(redis.url)
          timeout: \(GatewayProcess.redisTimeout)
        otp:
          mode: uat
        rate_limits:
          api_key_failures_per_ip: {capacity: 3, refill_per_second: 0.01}
        """
        let gateway = try await GatewayProcess(yaml: yaml)
        let partner = try await DriverAPI.createPartner(gateway, name: "Behind the same NAT")
        let known = try await DriverAPI.createKey(gateway, partnerID: partner)
        #expect(try await Self.whoami(gateway, key: known).status == 200)
        let missing = try await Self.whoami(gateway, key: nil)
        #expect(missing.status == 401)
        #expect(missing.code == "MISSING_API_KEY")

        // Three failures spend the IP's bucket; the fourth attempt with an unknown key is
        // refused with 429 even with a correct-looking key, and says when to come back.
        for _ in 0..<3 {
            let wrong = try await Self.whoami(gateway, key: "pgk_live_nope")
            #expect(wrong.status == 401)
            #expect(wrong.code == "INVALID_API_KEY")
        }
        let blocked = try await Self.whoami(gateway, key: "pgk_live_still_nope")
        #expect(blocked.status == 429)
        #expect(blocked.code == "RATE_LIMIT_EXCEEDED")
        #expect(Int(blocked.headers.first(name: "Retry-After") ?? "") ?? 0 >= 1)
        // Keys the gateway knows are valid still pass from the blocked address: the one it
        // has seen, and one it must look up in Redis first.
        let known2 = try await DriverAPI.createKey(gateway, partnerID: partner)
        for key in [known, known2] {
            let valid = try await Self.whoami(gateway, key: key)
            #expect(valid.status == 200, "\(valid.status) \(valid.body)")
            #expect(valid.body["partner_id"] as? String == partner)
        }
        #expect(try await Self.whoami(gateway, key: "pgk_live_nope_again").status == 429)
        // A key in the query string is never looked at.
        let query = try await Self.call(gateway.baseURL + "/partner/v1/whoami?api_key=pgk_live_x")
        #expect(query.status == 429 || query.code == "MISSING_API_KEY")
    }
}
