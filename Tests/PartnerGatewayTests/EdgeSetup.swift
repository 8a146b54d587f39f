import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// Gateways with the authorization listener (docs/edges.md) on one Redis, the echo upstream,
/// and routes that only edges ask about: what the edge and verify API tests share.
struct EdgeSetup {
    let redis: RedisServer
    let upstream: EchoUpstreamProcess
    let gateways: [GatewayProcess]
    var gateway: GatewayProcess { gateways[0] }

    /// The routes: a bearer route, a scoped API-key route, a limited bearer route (2 calls,
    /// refilled once in 100 s), an open one (all `upstream: none`), and one the gateway proxies.
    static func routes(_ upstream: EchoUpstreamProcess) -> String {
        """
        routes:
          - {name: user-profile, path_prefix: /user, upstream: none, auth: bearer}
          - {name: orders, path_prefix: /orders, upstream: none, auth: api_key, scope: "orders:read"}
          - {name: rides, path_prefix: /rides, upstream: none, auth: bearer, rate_limit: {per: user, capacity: 2, refill_per_second: 0.01}}
          - {name: status, path_prefix: /status, upstream: none, auth: none}
          - {name: proxied, path_prefix: /proxied, upstream: \(upstream.url), auth: bearer}
        """
    }

    /// `instances` gateways trusting loopback proxies (nginx, the emulated edges), with
    /// `rateLimits` in place of the generous defaults of the driver tests when given.
    static func start(instances: Int = 1, rateLimits: String = DriverYAML.generousTriggerLimits) async throws -> EdgeSetup {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        let yaml = DriverYAML.make(redis: redis, rateLimits: rateLimits, extra: "trusted_proxies: [127.0.0.1/32]\n" + routes(upstream))
        var gateways: [GatewayProcess] = []
        for _ in 0..<instances { gateways.append(try await GatewayProcess(yaml: yaml, authz: true)) }
        return EdgeSetup(redis: redis, upstream: upstream, gateways: gateways)
    }

    /// A partner and a key of it holding `orders:read`: (partner id, key id, key).
    func partnerAndKey(scopes: [String]? = nil) async throws -> (String, String, String) {
        try await PartnerControlsProcessTests.partnerAndKey(gateway, keyScopes: scopes)
    }

    /// `kind`, configured as docs/edges.md says, in front of the echo upstream and asking
    /// `gateway` (the first instance when none is named).
    func edge(_ kind: ForwardAuthEdge.Kind, asking gateway: GatewayProcess? = nil) async throws -> ForwardAuthEdge {
        try await ForwardAuthEdge(kind, authzPort: try #require((gateway ?? self.gateway).authzPort), upstreamPort: upstream.port)
    }

    /// How many requests the echo upstream has received.
    var upstreamRequests: Int { upstream.receivedPaths.count }

    /// What an edge gets from `/forward` for the request `headers` describe.
    static func forward(_ gateway: GatewayProcess, path: String = "/forward", method: HTTPMethod = .GET, headers: [(String, String)]) async throws -> DriverResponse {
        try await DriverHTTP.call(gateway.authzURL + path, method: method, headers: headers)
    }
}
