import Foundation
import NIOHTTP1
import Testing

// The partner portal's API as a browser page calls it (docs/portal.md): `Origin` of the portal
// and the `pg_portal` session cookie, against real `PartnerGateway` processes.

/// A signed-in member: who they are and the session cookie their browser holds.
public struct PortalMember: Sendable {
    public let memberID: String
    public let partnerID: String
    public let email: String
    public let role: String
    /// `pg_portal=<session>`, as a browser sends it back.
    public let cookie: String
}

public enum PortalAPI {
    /// `portal.origin` of the tests' gateways.
    public static let origin = "https://partners.example.com"

    /// A configuration with the portal on (`delivery` is `uat` unless a webhook URL is given),
    /// an `api_key` route to `upstream`, and generous sign-in limits unless `rateLimits` says.
    public static func yaml(
        redis: RedisServer, upstream: EchoUpstreamProcess? = nil, webhook: String? = nil, portal extra: String = "",
        rateLimits: String = DriverYAML.generousTriggerLimits, trustedProxies: Bool = false
    ) -> String {
        let delivery = webhook.map { "delivery: webhook, code_webhook_url: \"\($0)\"" } ?? "delivery: uat"
        var yaml = DriverYAML.make(redis: redis, rateLimits: rateLimits)
        yaml += "portal: {enabled: true, origin: \"\(origin)\", \(delivery)\(extra.isEmpty ? "" : ", " + extra)}\n"
        if trustedProxies { yaml += "trusted_proxies: [127.0.0.1/32]\n" }
        if let upstream {
            yaml += """
            routes:
              - {name: partner-api, path_prefix: /api, upstream: \(upstream.url), auth: api_key}

            """
        }
        return yaml
    }

    /// A portal API call (`path` under `/portal/v1`) from the portal's page: its `Origin`, and
    /// the member's cookie when given. `headers` are added (and may replace `Origin`).
    public static func call(
        _ gateway: GatewayProcess, _ method: HTTPMethod, _ path: String, as member: PortalMember? = nil, body: String? = nil,
        origin: String? = PortalAPI.origin, headers: [(String, String)] = []
    ) async throws -> DriverResponse {
        var fields: [(String, String)] = []
        if let origin { fields.append(("Origin", origin)) }
        if let member { fields.append(("Cookie", member.cookie)) }
        fields += headers
        return try await DriverHTTP.call(gateway.baseURL + "/portal/v1" + path, method: method, headers: fields, body: body)
    }

    /// Invites `email` to the partner through the admin API; the member's id.
    public static func invite(_ gateway: GatewayProcess, partnerID: String, email: String, name: String? = nil, role: String) async throws -> String {
        let answer = try await DriverAPI.admin(
            gateway, .POST, "/v1/partners/\(partnerID)/members", body: DriverHTTP.json(["email": email, "name": name ?? email, "role": role])
        )
        try #require(answer.status == 201, "invite: \(answer)")
        return try #require(answer.string("member_id"))
    }

    /// Asks for a code and signs in with `code` (the UAT code unless given); the member.
    public static func signIn(_ gateway: GatewayProcess, email: String, code: String = DriverAPI.uatCode) async throws -> PortalMember {
        let asked = try await call(gateway, .POST, "/session/code", body: DriverHTTP.json(["email": email]))
        try #require(asked.status == 202, "code: \(asked)")
        return try await session(gateway, email: email, code: code)
    }

    /// Signs in with a code already sent.
    public static func session(_ gateway: GatewayProcess, email: String, code: String) async throws -> PortalMember {
        let answer = try await call(gateway, .POST, "/session", body: DriverHTTP.json(["email": email, "code": code]))
        try #require(answer.status == 200, "sign-in: \(answer)")
        let setCookie = try #require(answer.headers["Set-Cookie"].first, "no session cookie: \(answer.headers)")
        return PortalMember(
            memberID: try #require(answer.string("member_id")), partnerID: try #require(answer.string("partner_id")), email: email,
            role: try #require(answer.string("role")), cookie: String(setCookie.split(separator: ";")[0])
        )
    }

    /// Invites and signs in.
    public static func member(_ gateway: GatewayProcess, partnerID: String, email: String, role: String) async throws -> PortalMember {
        _ = try await invite(gateway, partnerID: partnerID, email: email, role: role)
        return try await signIn(gateway, email: email)
    }
}

/// Every key of a (non-cluster) redis-server with its `DUMP`, in one step: what a test compares
/// to show that calls changed nothing, byte for byte. Expiry times are not part of a `DUMP`.
public enum RedisSnapshot {
    /// Waits until every rate-limit bucket is full again (a full bucket's key is gone): taken
    /// before a "before" picture, so a bucket refilling meanwhile is not a change.
    public static func awaitFullBuckets(_ redis: RedisServer) async throws {
        try await eventually(timeout: .seconds(20), interval: .milliseconds(50)) {
            try await redis.cli("--scan", "--pattern", "pg:rl:*").isEmpty
        }
    }

    public static func take(_ redis: RedisServer) async throws -> [String: String] {
        let script = "local r = {} for _, k in ipairs(redis.call('KEYS', '*')) do r[#r + 1] = k r[#r + 1] = redis.call('DUMP', k) end return r"
        let output = try await redis.cli(arguments: ["--no-raw", "EVAL", script, "0"])
        // `1) "key"`, `2) "\x00..."`, ...: the values without their numbers (KEYS has no order).
        let lines = output.split(separator: "\n").compactMap { line in line.range(of: ") ").map { String(line[$0.upperBound...]) } }
        var snapshot: [String: String] = [:]
        var index = 0
        while index + 1 < lines.count {
            snapshot[lines[index]] = lines[index + 1]
            index += 2
        }
        return snapshot
    }
}
