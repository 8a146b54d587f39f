import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization
import Testing
import TestSupport

/// SIGHUP reloads the configuration file: a valid one changes routes under load without a
/// failed request; an invalid one changes nothing and says so once.
@Suite("Configuration reload", .realProcesses)
struct ConfigReloadTests {
    private func yaml(redis: RedisServer, echoUpstream: String, extra: String = "") -> String {
        """
        redis: {url: \(redis.url), timeout: \(GatewayProcess.redisTimeout)}
        otp: {mode: uat}
        routes:
          - {name: echo, path_prefix: /echo, upstream: \(echoUpstream), auth: none}
        \(extra)
        """
    }

    private func metric(_ gateway: GatewayProcess, _ series: String) async throws -> Double? {
        let text = try await DriverHTTP.call(gateway.adminURL + "/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix(series + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    /// 100 clients keep calling while the `echo` route moves to another upstream and a new
    /// route appears: every request succeeds, and afterwards the new upstream gets the calls.
    @Test func reloadUnderLoadFailsNoRequest() async throws {
        let redis = try await RedisServer()
        let before = try await EchoUpstreamProcess()
        let after = try await EchoUpstreamProcess()
        let gateway = try await GatewayProcess(yaml: yaml(redis: redis, echoUpstream: before.url))

        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 100)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let load = LoadCounters()
        let url = gateway.baseURL + "/echo/load"

        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    while !load.stop.load(ordering: .relaxed) {
                        do {
                            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
                            _ = try await response.body.collect(upTo: 1 << 20)
                            if response.status == .ok {
                                load.succeeded.add(1, ordering: .relaxed)
                            } else {
                                load.failures.withLock { $0.append("status \(response.status.code)") }
                            }
                        } catch {
                            load.failures.withLock { $0.append("\(error)") }
                        }
                    }
                }
            }
            try await eventually(timeout: .seconds(30)) { load.succeeded.load(ordering: .relaxed) >= 300 }
            try yaml(redis: redis, echoUpstream: after.url, extra: "  - {name: added, path_prefix: /added, upstream: \(after.url), auth: none}")
                .write(toFile: gateway.configPath, atomically: true, encoding: .utf8)
            gateway.process.signal(SIGHUP)
            // The new upstream takes over, while the clients go on.
            try await eventually(timeout: .seconds(30)) { after.log.contains("received GET /echo/load") }
            let atSwitch = load.succeeded.load(ordering: .relaxed)
            try await eventually(timeout: .seconds(30)) { load.succeeded.load(ordering: .relaxed) >= atSwitch + 300 }
            load.stop.store(true, ordering: .relaxed)
            try await group.waitForAll()
        }
        try await client.shutdown()

        #expect(load.failures.withLock { $0 }.isEmpty, "\(load.failures.withLock { $0.prefix(5) })")
        print("reload under 100 clients: \(load.succeeded.load(ordering: .relaxed)) requests, \(load.failures.withLock { $0.count }) failed")
        #expect(try await DriverHTTP.call(gateway.baseURL + "/added/x").status == 200)
        #expect(try await metric(gateway, #"gateway_config_reloads_total{result="applied"}"#) == 1)
    }

    /// What the clients of ``reloadUnderLoadFailsNoRequest()`` share.
    private final class LoadCounters: Sendable {
        let succeeded = Atomic(0)
        let failures = Mutex([String]())
        let stop = Atomic(false)
    }

    /// An invalid file keeps the running configuration: same routes, one log line naming every
    /// problem, `gateway_config_reloads_total{result="invalid"}`.
    @Test func invalidReloadChangesNothing() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        let gateway = try await GatewayProcess(yaml: yaml(redis: redis, echoUpstream: upstream.url))
        #expect(try await DriverHTTP.call(gateway.baseURL + "/echo/a").status == 200)

        try """
        redis: {url: \(redis.url), timeout: \(GatewayProcess.redisTimeout)}
        otp: {mode: uat}
        colour: red
        routes:
          - {name: other, path_prefix: /other, upstream: ftp://nowhere, auth: none}
        """.write(toFile: gateway.configPath, atomically: true, encoding: .utf8)
        gateway.process.signal(SIGHUP)
        try await eventually(timeout: .seconds(10)) {
            try await metric(gateway, #"gateway_config_reloads_total{result="invalid"}"#) == 1
        }

        #expect(try await DriverHTTP.call(gateway.baseURL + "/echo/b").status == 200)
        #expect(try await DriverHTTP.call(gateway.baseURL + "/other/b").status == 404)
        #expect(try await metric(gateway, #"gateway_config_reloads_total{result="applied"}"#) == 0)
        let refusals = gateway.log.split(separator: "\n").filter { $0.contains("configuration reload refused") }
        #expect(refusals.count == 1, "\(gateway.log)")
        #expect(refusals.first?.contains("colour: unknown key") == true)
        #expect(refusals.first?.contains("routes[0].upstream") == true)
        #expect(gateway.process.isRunning)
    }

    /// `/payouts/` (open) next to `/payouts` (bearer): which one served `/payouts/list`
    /// depended on the order in the file. Such a table is refused by `--check-config` and by
    /// a reload, which keeps the routes in service.
    @Test func anAmbiguousRouteTableIsRefusedByTheCheckAndByAReload() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: yaml(redis: redis, echoUpstream: upstream.url))
        let ambiguous = """
            redis: {url: \(redis.url), timeout: \(GatewayProcess.redisTimeout)}
            otp: {mode: uat}
            routes:
              - {name: echo, path_prefix: /echo, upstream: \(upstream.url), auth: none}
              - {name: payouts-open, path_prefix: /payouts/, upstream: \(upstream.url), auth: none}
              - {name: payouts, path_prefix: /payouts, upstream: \(upstream.url), auth: bearer}
            """
        try ambiguous.write(toFile: gateway.configPath, atomically: true, encoding: .utf8)

        let check = try await ShortCommand.run(BuiltProduct.path("PartnerGateway"), ["--config", gateway.configPath, "--check-config"], environment: [:])
        #expect(check.status == 2, "\(check.stdout) \(check.stderr)")
        #expect(check.stderr.contains("routes[2].path_prefix"), "\(check.stderr)")
        #expect(check.stderr.contains("routes[1]"), "\(check.stderr)")

        gateway.process.signal(SIGHUP)
        // The counter moves before the refusal's log line reaches the file: await both.
        try await eventually(timeout: .seconds(10)) {
            try await metric(gateway, #"gateway_config_reloads_total{result="invalid"}"#) == 1
                && gateway.log.contains("configuration reload refused")
        }
        let refusal = gateway.log.split(separator: "\n").first { $0.contains("configuration reload refused") }
        #expect(refusal?.contains("routes[2].path_prefix") == true, "\(gateway.log)")
        #expect(try await DriverHTTP.call(gateway.baseURL + "/payouts/list").status == 404)
        #expect(try await DriverHTTP.call(gateway.baseURL + "/echo/a").status == 200)
    }
}

