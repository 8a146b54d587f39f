import Foundation
import NIOCore
import NIOHTTP1
import Testing
import TestSupport

// Shared by the hardening scenarios: plain HTTP against real gateway processes, what a
// driver's app, a partner backend and an admin see, and the measurements they print.

/// What the scenarios call beyond the shared client.
extension DriverAPI {
    static func whoami(_ gateway: GatewayProcess, key: String) async throws -> DriverResponse {
        try await DriverHTTP.call(gateway.baseURL + "/partner/v1/whoami", headers: [("X-API-Key", key)])
    }

    /// An SDK mint whose driver id is made from the phone.
    static func mint(_ gateway: GatewayProcess, key: String, phone: String) async throws -> DriverResponse {
        try await mint(gateway, key: key, phone: phone, driverID: "NY-\(phone.suffix(4))")
    }

    /// A partner with a key through the admin API (``ServiceUnavailableAnswer`` thrown on a 503).
    static func partnerWithKey(_ gateway: GatewayProcess, name: String, rate: Double = 10_000, burst: Int = 10_000) async throws -> PartnerKey {
        let partner = try await admin(gateway, .POST, "/v1/partners", body: DriverHTTP.json(["name": name, "rate": rate, "burst": burst])).available("create partner")
        try #require(partner.status < 300, "create partner: \(partner)")
        let partnerID = try #require(partner.string("partner_id"))
        let created = try await admin(gateway, .POST, "/v1/partners/\(partnerID)/keys").available("create key")
        try #require(created.status < 300, "create key: \(created)")
        return PartnerKey(partnerID: partnerID, keyID: try #require(created.string("key_id")), key: try #require(created.string("key")))
    }
}

struct PartnerKey: Sendable {
    let partnerID: String
    let keyID: String
    let key: String
}

/// Gateway configurations for the scenarios.
enum HardeningYAML {
    /// UAT OTPs, limits that a scenario's own traffic never reaches (unless it passes its
    /// own), a bearer route and an open route to `upstream`.
    static func make(
        redis: RedisServer,
        upstream: EchoUpstreamProcess? = nil,
        redisTimeout: String = GatewayProcess.redisTimeout,
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
        otp_verify_failures_per_ip: {capacity: 100000, refill_per_second: 10000}, \
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
