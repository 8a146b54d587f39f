import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import TestSupport

/// A Redis, a gateway with an `api_key` route to an echo upstream, and a folder for state
/// files and secrets: what the partners-as-code tests run `gatewayctl export|diff|apply`
/// against.
final class StateFixture: Sendable {
    let redis: RedisServer
    let upstream: EchoUpstreamProcess
    let gateway: GatewayProcess
    let folder: TemporaryFolder

    /// `redisTimeout`: how long the gateway waits for Redis (shorter for the tests that pause it).
    init(redisTimeout: String = GatewayProcess.redisTimeout) async throws {
        redis = try await RedisServer()
        upstream = try await EchoUpstreamProcess()
        gateway = try await GatewayProcess(yaml: """
            redis:
              url: \(redis.url)
              timeout: \(redisTimeout)
            otp:
              mode: uat
            routes:
              - {name: partner-api, path_prefix: /partner-api, upstream: \(upstream.url), auth: api_key}
            """)
        folder = try TemporaryFolder("pg-state")
    }

    /// gatewayctl against this gateway (or `adminURL`) with the break-glass token.
    func ctl(_ arguments: [String], adminURL: String? = nil, stdin: String? = nil, environment: [String: String] = [:]) async throws -> CtlResult {
        try await Ctl.run(arguments, adminURL: adminURL ?? gateway.adminURL, token: GatewayProcess.adminToken, stdin: stdin, environment: environment)
    }

    /// Runs a command that must succeed (exit 0) and returns its result.
    @discardableResult
    func succeed(_ arguments: String...) async throws -> CtlResult {
        let result = try await ctl(arguments)
        try #require(result.status == 0, "\(result)")
        return result
    }

    /// Writes a file in the folder and returns its path.
    func write(_ name: String, _ text: String) throws -> String {
        let path = folder.path(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func read(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8)
    }

    /// The number of entries in the audit trail of actions (the newest entry's `seq`).
    func auditEntries() async throws -> Int {
        let page = try await succeed("audit", "--limit", "1", "-o", "json").object()
        let items = try #require(page["items"] as? [[String: Any]])
        return items.first?["seq"] as? Int ?? 0
    }

    /// Every key and its value in Redis, as one digest: equal digests, equal bytes.
    func redisDigest() async throws -> String {
        let script = """
            local keys = redis.call('KEYS', '*')
            table.sort(keys)
            local parts = {}
            for _, key in ipairs(keys) do parts[#parts + 1] = key .. '=' .. redis.sha1hex(redis.call('DUMP', key)) end
            return #keys .. ' keys ' .. redis.sha1hex(table.concat(parts, '\\n'))
            """
        return try await redis.cli("EVAL", script, "0")
    }

    /// A call on the `api_key` route with `key`: its status.
    func callPartnerAPI(key: String) async throws -> UInt {
        var request = HTTPClientRequest(url: gateway.baseURL + "/partner-api/orders")
        request.headers.add(name: "X-API-Key", value: key)
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        _ = try await response.body.collect(upTo: 1 << 20)
        return response.status.code
    }
}
