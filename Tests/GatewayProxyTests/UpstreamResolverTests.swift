@testable import GatewayConfiguration
@testable import GatewayProxy
import Logging
import Synchronization
import TestSupport
import Testing

/// Targets named by a host name: one target per address the name resolves to, followed as
/// the answer changes, kept through a failed lookup, without a reload.
@Suite struct UpstreamResolverTests {
    /// A DNS server the test sets the answers of.
    final class FakeDNS: Sendable {
        private let answers = Mutex<[String: [String]]>([:])
        func set(_ host: String, _ addresses: [String]) { answers.withLock { $0[host] = addresses } }
        func lookUp(_ host: String) -> [String] { answers.withLock { $0[host] ?? [] } }
    }

    private static func table(_ yaml: String) throws -> RouteTable {
        try RouteTable(try TestConfig.load("otp: {mode: uat}\nroutes:\n" + yaml).routes, clientScheme: "http", logger: Logger(label: "test"))
    }

    private static func urls(_ routes: RouteTable) -> [String] {
        routes.all[0].fleet.targets.map(\.url)
    }

    @Test func aHostNameBecomesOneTargetPerAddressAndFollowsTheAnswer() async throws {
        let routes = try Self.table("""
              - {name: svc, path_prefix: /svc, auth: none, upstream: [http://svc.internal:9001/api, {url: http://10.0.0.9:9001/api, weight: 3}]}
            """)
        #expect(routes.hostNames == ["svc.internal"])
        // Before the first lookup: connected to by name.
        #expect(Self.urls(routes) == ["http://svc.internal:9001/api", "http://10.0.0.9:9001/api"])
        let dns = FakeDNS()
        let resolver = UpstreamResolver(routes: routes, interval: .seconds(30), logger: Logger(label: "test"), lookUp: dns.lookUp)

        dns.set("svc.internal", ["10.0.0.2", "10.0.0.1", "fd00::1"])
        await resolver.refresh()
        #expect(Self.urls(routes) == ["http://10.0.0.1:9001/api", "http://10.0.0.2:9001/api", "http://[fd00::1]:9001/api", "http://10.0.0.9:9001/api"])
        let fleet = routes.all[0].fleet
        // Each keeps the name as its Host and the configured target's weight.
        #expect(fleet.targets.prefix(3).allSatisfy { $0.authority == "svc.internal:9001" && $0.weight == 1 })
        #expect(fleet.targets[3].weight == 3)
        // The base path is the route's, whatever the target.
        #expect(routes.all[0].upstreamBasePath == "/api")

        // The same answer in another order changes nothing: the fleet (and its state) stays.
        dns.set("svc.internal", ["fd00::1", "10.0.0.1", "10.0.0.2"])
        await resolver.refresh()
        #expect(routes.all[0].fleet === fleet)

        // An instance gone, one new: the pools of the addresses that stayed are kept.
        let kept = fleet.targets[0].pool
        dns.set("svc.internal", ["10.0.0.1", "10.0.0.3"])
        await resolver.refresh()
        #expect(Self.urls(routes) == ["http://10.0.0.1:9001/api", "http://10.0.0.3:9001/api", "http://10.0.0.9:9001/api"])
        #expect(routes.all[0].fleet.targets[0].pool === kept)

        // A failed lookup keeps the last answer: a DNS outage does not empty the fleet.
        dns.set("svc.internal", [])
        await resolver.refresh()
        #expect(Self.urls(routes) == ["http://10.0.0.1:9001/api", "http://10.0.0.3:9001/api", "http://10.0.0.9:9001/api"])
    }

    @Test func aReloadKeepsTheAddressesAndAnAddressListedTwiceIsOneTarget() async throws {
        let routes = try Self.table("""
              - {name: svc, path_prefix: /svc, auth: none, upstream: http://svc.internal:9001}
            """)
        let dns = FakeDNS()
        dns.set("svc.internal", ["10.0.0.1", "10.0.0.2"])
        await UpstreamResolver(routes: routes, interval: .seconds(30), logger: Logger(label: "test"), lookUp: dns.lookUp).refresh()
        try routes.replace(with: try TestConfig.load("""
            otp: {mode: uat}
            routes:
              - {name: svc, path_prefix: /svc, auth: none, upstream: [http://svc.internal:9001, http://10.0.0.2:9001]}
            """).routes)
        #expect(Self.urls(routes) == ["http://10.0.0.1:9001", "http://10.0.0.2:9001"])
    }

    @Test func theRefreshIntervalIsConfigurable() throws {
        #expect(try TestConfig.load("otp: {mode: uat}\n").server.upstreamDNSRefresh.duration == .seconds(30))
        #expect(try TestConfig.load("otp: {mode: uat}\nserver: {upstream_dns_refresh: 5s}\n").server.upstreamDNSRefresh.duration == .seconds(5))
        #expect(throws: (any Error).self) { try TestConfig.load("otp: {mode: uat}\nserver: {upstream_dns_refresh: 100ms}\n") }
    }

    @Test func localhostResolvesToALoopbackAddress() async {
        let found = await UpstreamAddresses().refreshed(["localhost"]).addresses(of: "localhost") ?? []
        #expect(found.contains("127.0.0.1") || found.contains("::1"), "\(found)")
    }
}
