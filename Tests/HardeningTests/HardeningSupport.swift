import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing
import TestSupport

// Shared by the hardening scenarios: plain HTTP against real gateway processes, what a
// driver's app, a partner backend and an admin see, and the measurements they print.

/// One HTTP answer, kept as text so it can cross task boundaries.
struct Answer: Sendable, CustomStringConvertible {
    let status: UInt
    let text: String
    let headers: HTTPHeaders
    /// From just before the request was sent to the last byte of the body.
    let elapsed: Duration

    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    var code: String? { (json["error"] as? [String: Any])?["code"] as? String }
    func string(_ key: String) -> String? { json[key] as? String }

    /// Exactly the spec's error shape: `{"error": {"code", "message"}}`, non-empty strings.
    var isErrorShape: Bool {
        guard json.count == 1, let error = json["error"] as? [String: Any],
            let code = error["code"] as? String, let message = error["message"] as? String
        else { return false }
        return !code.isEmpty && !message.isEmpty && Set(error.keys) == ["code", "message"]
    }

    /// The spec's fail-closed answer (SPEC §2.5).
    var isServiceUnavailable: Bool { status == 503 && code == "SERVICE_UNAVAILABLE" && isErrorShape }

    var description: String { "\(status) \(text.prefix(300))" }
}

enum HTTP {
    static func call(
        _ url: String,
        method: HTTPMethod = .GET,
        headers: [(String, String)] = [],
        body: String? = nil,
        timeout: TimeAmount = .seconds(30)
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.body = .bytes(ByteBuffer(string: body))
            request.headers.add(name: "Content-Type", value: "application/json")
        }
        let clock = ContinuousClock()
        let start = clock.now
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: 4 << 20)
        return Answer(status: response.status.code, text: String(buffer: bytes), headers: response.headers, elapsed: clock.now - start)
    }

    static func json(_ object: [String: Any]) -> String {
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}

/// The public and admin API of one gateway process.
enum API {
    static let uatCode = "123456"

    static func post(_ gateway: GatewayProcess, _ path: String, body: String?, headers: [(String, String)] = []) async throws -> Answer {
        try await HTTP.call(gateway.baseURL + path, method: .POST, headers: headers, body: body)
    }

    static func trigger(_ gateway: GatewayProcess, phone: String) async throws -> Answer {
        try await post(gateway, "/auth/otp/trigger", body: HTTP.json(["phone": phone]))
    }

    static func verify(_ gateway: GatewayProcess, phone: String, otp: String = uatCode) async throws -> Answer {
        try await post(gateway, "/auth/otp/verify", body: HTTP.json(["phone": phone, "otp": otp]))
    }

    static func refresh(_ gateway: GatewayProcess, _ refreshToken: String) async throws -> Answer {
        try await post(gateway, "/auth/token/refresh", body: HTTP.json(["refresh_token": refreshToken]))
    }

    static func logout(_ gateway: GatewayProcess, access: String) async throws -> Answer {
        try await post(gateway, "/auth/logout", body: nil, headers: [("Authorization", "Bearer \(access)")])
    }

    static func profile(_ gateway: GatewayProcess, token: String) async throws -> Answer {
        try await HTTP.call(gateway.baseURL + "/user/profile", headers: [("Authorization", "Bearer \(token)")])
    }

    static func whoami(_ gateway: GatewayProcess, key: String) async throws -> Answer {
        try await HTTP.call(gateway.baseURL + "/partner/v1/whoami", headers: [("X-API-Key", key)])
    }

    static func mint(_ gateway: GatewayProcess, key: String, phone: String) async throws -> Answer {
        try await post(gateway, "/partner/v1/sdk-token", body: HTTP.json(["phone": phone, "driver_id": "NY-\(phone.suffix(4))"]), headers: [("X-API-Key", key)])
    }

    /// Trigger then verify with the UAT code: a token pair, or a failed test.
    static func login(_ gateway: GatewayProcess, phone: String) async throws -> TokenPair {
        let sent = try await trigger(gateway, phone: phone)
        try #require(sent.status == 200, "trigger: \(sent)")
        return try TokenPair(try await verify(gateway, phone: phone))
    }

    static func admin(_ gateway: GatewayProcess, _ method: HTTPMethod, _ path: String, body: String? = nil) async throws -> Answer {
        try await HTTP.call(
            gateway.adminURL + path, method: method,
            headers: [("Authorization", "Bearer \(GatewayProcess.adminToken)")], body: body
        )
    }

    /// A partner with a key through the admin API.
    static func partnerWithKey(_ gateway: GatewayProcess, name: String, rate: Double = 10_000, burst: Int = 10_000) async throws -> PartnerKey {
        let partner = try await admin(gateway, .POST, "/v1/partners", body: HTTP.json(["name": name, "rate": rate, "burst": burst]))
        try #require(partner.status < 300, "create partner: \(partner)")
        let partnerID = try #require(partner.string("partner_id"))
        let created = try await admin(gateway, .POST, "/v1/partners/\(partnerID)/keys")
        try #require(created.status < 300, "create key: \(created)")
        return PartnerKey(partnerID: partnerID, keyID: try #require(created.string("key_id")), key: try #require(created.string("key")))
    }
}

struct PartnerKey: Sendable {
    let partnerID: String
    let keyID: String
    let key: String
}

/// A `200` token pair (SPEC 2.3).
struct TokenPair: Sendable {
    let accessToken: String
    let refreshToken: String
    let userID: String

    init(_ answer: Answer) throws {
        try #require(answer.status == 200, "expected a token pair, got \(answer)")
        accessToken = try #require(answer.string("access_token"))
        refreshToken = try #require(answer.string("refresh_token"))
        userID = try #require(answer.string("user_id"))
    }
}

/// Gateway configurations for the scenarios.
enum HardeningYAML {
    /// UAT OTPs, limits that a scenario's own traffic never reaches (unless it passes its
    /// own), a bearer route and an open route to `upstream`.
    static func make(
        redis: RedisServer,
        upstream: EchoUpstreamProcess? = nil,
        redisTimeout: String = "250ms",
        rateLimits: String = generousLimits,
        server: String? = nil
    ) -> String {
        var yaml = """
        redis:
          url: \(redis.url)
          timeout: \(redisTimeout)
        otp:
          mode: uat
        log:
          access_log: false
        rate_limits: \(rateLimits)

        """
        if let server { yaml += "server: \(server)\n" }
        if let upstream {
            yaml += """
            routes:
              - {name: user-profile, path_prefix: /user, upstream: \(upstream.url), auth: bearer}
              - {name: open, path_prefix: /open, upstream: \(upstream.url), auth: none, timeout: 10s}

            """
        }
        return yaml
    }

    static let generousLimits = """
        {otp_trigger_per_phone: {capacity: 1000, refill_per_second: 100}, \
        otp_trigger_per_ip: {capacity: 100000, refill_per_second: 10000}, \
        api_key_failures_per_ip: {capacity: 100000, refill_per_second: 10000}}
        """
}

extension Duration {
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}

/// The `q`-quantile (0...1) of `values`, nearest rank.
func quantile(_ values: [Duration], _ q: Double) -> Duration {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .zero }
    let rank = Int((q * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}
