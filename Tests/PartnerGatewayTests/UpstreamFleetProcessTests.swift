import Foundation
import NIOHTTP1
import NIOConcurrencyHelpers
import Testing
import TestSupport

/// Routes over several echo upstreams (real processes on loopback): the balancers' splits,
/// one caller per target with `hash_user`, a target killed under load, and a route with no
/// target left.
@Suite("Upstream fleets: balancing, ejection and retries", .realProcesses)
struct UpstreamFleetProcessTests {
    /// In every path the tests send: an echo upstream appends to a log named after its port,
    /// which an earlier run of the tests may have used too.
    private static let run = String(UInt32.random(in: .min ... .max), radix: 36)

    /// Which upstream received each path (from their `received` lines; every path is unique).
    private static func receivers(_ upstreams: [EchoUpstreamProcess]) -> [String: String] {
        var receivers: [String: String] = [:]
        for upstream in upstreams {
            for path in upstream.receivedPaths { receivers[path] = Self.authority(upstream) }
        }
        return receivers
    }

    private static func list(_ upstreams: [EchoUpstreamProcess]) -> String {
        "[" + upstreams.map(\.url).joined(separator: ", ") + "]"
    }

    private static func authority(_ upstream: EchoUpstreamProcess) -> String { "127.0.0.1:\(upstream.port)" }

    @Test func roundRobinAndWeightsSplitTheRequests() async throws {
        let redis = try await RedisServer()
        let upstreams = [try await EchoUpstreamProcess(), try await EchoUpstreamProcess(), try await EchoUpstreamProcess()]
        defer { for upstream in upstreams { upstream.stop() } }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: """
            routes:
              - {name: even, path_prefix: /even, upstream: \(Self.list(upstreams)), auth: none}
              - name: weighted
                path_prefix: /weighted
                auth: none
                upstream: [\(upstreams[0].url), {url: \(upstreams[1].url), weight: 2}]
            """))
        for index in 0..<300 {
            let answer = try await DriverHTTP.call(gateway.baseURL + "/even/\(Self.run)-\(index)")
            try #require(answer.status == 200, "\(answer)")
        }
        var even: [String: Int] = [:]
        for (path, target) in Self.receivers(upstreams) where path.hasPrefix("/even/\(Self.run)-") { even[target, default: 0] += 1 }
        #expect(even.count == 3, "\(even)")
        #expect(upstreams.allSatisfy { (90...110).contains(even[Self.authority($0)] ?? 0) }, "\(even)")
        // The gateway's own count per target agrees.
        let metrics = try await DriverAPI.admin(gateway, .GET, "/metrics").text
        for upstream in upstreams {
            let series = #"gateway_upstream_target_requests_total{route="even",target="\#(upstream.url)"} "#
            let line = metrics.split(separator: "\n").first { $0.hasPrefix(series) }
            #expect(line.flatMap { Double($0.dropFirst(series.count)) } == Double(even[Self.authority(upstream)] ?? -1), "\(String(describing: line))")
        }
        for index in 0..<300 {
            let answer = try await DriverHTTP.call(gateway.baseURL + "/weighted/\(Self.run)-\(index)")
            try #require(answer.status == 200, "\(answer)")
        }
        var weighted: [String: Int] = [:]
        for (path, target) in Self.receivers(upstreams) where path.hasPrefix("/weighted/\(Self.run)-") { weighted[target, default: 0] += 1 }
        #expect((90...110).contains(weighted[Self.authority(upstreams[0])] ?? 0), "\(weighted)")
        #expect((190...210).contains(weighted[Self.authority(upstreams[1])] ?? 0), "\(weighted)")
        // The access line names the try count and the target that answered.
        try await eventually(timeout: .seconds(10)) { gateway.log.contains(#""tries":1,"upstream":"http://127.0.0.1:"#) }
    }

    /// Each of 20 drivers stays on one target; when a target goes, only its drivers move.
    @Test func hashUserKeepsDriversOnTheirTargetAndMovesOnlyTheGoneTargets() async throws {
        let redis = try await RedisServer()
        let upstreams = [try await EchoUpstreamProcess(), try await EchoUpstreamProcess(), try await EchoUpstreamProcess()]
        defer { for upstream in upstreams { upstream.stop() } }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: """
            routes:
              - name: sticky
                path_prefix: /sticky
                auth: bearer
                upstream: \(Self.list(upstreams))
                balance: hash_user
                health_check: {path: /healthz, interval: 200ms, timeout: 200ms, healthy: 1, unhealthy: 1}
            """))
        var drivers: [DriverTokenPair] = []
        for index in 0..<20 {
            drivers.append(try await DriverAPI.login(gateway, phone: "98765\(String(format: "%05d", 41_000 + index))"))
        }
        func targets(round: String) async throws -> [String] {
            for (index, driver) in drivers.enumerated() {
                for request in 0..<3 {
                    let answer = try await DriverHTTP.call(
                        gateway.baseURL + "/sticky/\(Self.run)-\(round)-\(index)-\(request)", headers: [("Authorization", "Bearer \(driver.accessToken)")]
                    )
                    try #require(answer.status == 200, "\(answer)")
                }
            }
            let receivers = Self.receivers(upstreams)
            return drivers.indices.map { index in
                let seen = Set((0..<3).map { receivers["/sticky/\(Self.run)-\(round)-\(index)-\($0)"] ?? "?" })
                #expect(seen.count == 1, "driver \(index) on several targets: \(seen)")
                return seen.first ?? "?"
            }
        }
        let before = try await targets(round: "before")
        #expect(Set(before).count >= 2, "20 drivers over 3 targets: \(before)")
        let gone = try #require(upstreams.first { before.contains(Self.authority($0)) })
        gone.stop()
        let metric = #"gateway_upstream_target_healthy{route="sticky",target="\#(gone.url)"} 0"#
        try await eventually(timeout: .seconds(10)) { try await DriverAPI.admin(gateway, .GET, "/metrics").text.contains(metric) }
        let after = try await targets(round: "after")
        for (index, target) in before.enumerated() {
            if target == Self.authority(gone) {
                #expect(after[index] != target)
            } else {
                #expect(after[index] == target, "driver \(index) moved from \(target) to \(after[index])")
            }
        }
    }

    /// One target killed under 50 concurrent clients: no GET fails (they are retried on the
    /// others), no POST reaches an upstream twice, and every POST answered 200 reached one once.
    @Test func aKilledTargetUnderLoadFailsNoGetAndDuplicatesNoPost() async throws {
        let redis = try await RedisServer()
        let upstreams = [try await EchoUpstreamProcess(), try await EchoUpstreamProcess(), try await EchoUpstreamProcess()]
        defer { for upstream in upstreams { upstream.stop() } }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: """
            routes:
              - name: fleet
                path_prefix: /fleet
                auth: none
                upstream: \(Self.list(upstreams))
                outlier: {consecutive_failures: 3, ejection_time: 30s}
                health_check: {path: /healthz, interval: 500ms, timeout: 200ms, healthy: 2, unhealthy: 2}
                retries: {attempts: 2}
            """))
        let completed = NIOLockedValueBox(0)
        let (killed, killing) = AsyncStream.makeStream(of: Void.self)
        let perClient = 40
        let results = try await withThrowingTaskGroup(of: [(String, DriverResponse)].self) { group in
            for client in 0..<50 {
                group.addTask {
                    var answers: [(String, DriverResponse)] = []
                    for index in 0..<perClient {
                        let isPost = index % 2 == 1
                        let path = "/fleet/\(Self.run)-\(isPost ? "post" : "get")-\(client)-\(index)"
                        let answer = try await DriverHTTP.call(gateway.baseURL + path, method: isPost ? .POST : .GET, body: isPost ? "{}" : nil)
                        answers.append((path, answer))
                        if completed.withLockedValue({ count in
                            count += 1
                            return count
                        }) == 300 { killing.yield() }
                    }
                    return answers
                }
            }
            group.addTask {
                for await _ in killed { break }
                upstreams[1].stop()
                return []
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        killing.finish()
        let gets = results.filter { $0.0.contains("-get-") }
        let posts = results.filter { $0.0.contains("-post-") }
        #expect(gets.count == 50 * perClient / 2)
        let failedGets = gets.filter { $0.1.status != 200 }
        #expect(failedGets.isEmpty, "\(failedGets.prefix(3).map { "\($0.0): \($0.1)" })")
        var reached: [String: Int] = [:]
        for upstream in upstreams {
            for path in upstream.receivedPaths where path.hasPrefix("/fleet/\(Self.run)-post-") { reached[path, default: 0] += 1 }
        }
        #expect(reached.values.allSatisfy { $0 == 1 }, "\(reached.filter { $0.value > 1 })")
        for (path, answer) in posts where answer.status == 200 {
            #expect(reached[path] == 1, "\(path) answered 200, reached \(reached[path] ?? 0) times")
        }
        for (path, answer) in posts where answer.status != 200 {
            #expect(answer.code == "UPSTREAM_UNAVAILABLE", "\(path): \(answer)")
        }
        let metrics = try await DriverAPI.admin(gateway, .GET, "/metrics").text
        #expect(metrics.contains(#"gateway_upstream_ejections_total{route="fleet",target="\#(upstreams[1].url)"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"gateway_upstream_retries_total{route="fleet",result="tried"}"#), "\(metrics)")
        print("UpstreamFleetProcessTests: \(posts.filter { $0.1.status != 200 }.count) of \(posts.count) POSTs failed when the target was killed")

        // Restarted, it is back within `interval × healthy` (two checks in a row pass; the
        // first may come up to an interval after the restart), and the gauge says so.
        let gauge = #"gateway_upstream_target_healthy{route="fleet",target="\#(upstreams[1].url)"}"#
        try await eventually(timeout: .seconds(10)) { try await DriverAPI.admin(gateway, .GET, "/metrics").text.contains("\(gauge) 0") }
        let back = try await EchoUpstreamProcess(port: upstreams[1].port)
        defer { back.stop() }
        let returned = try await eventually(timeout: .seconds(10)) {
            try await DriverAPI.admin(gateway, .GET, "/metrics").text.contains("\(gauge) 1")
        }
        #expect(returned < .milliseconds(500 * 2 + 300), "back after \(returned)")
        print("UpstreamFleetProcessTests: the restarted target was back after \(returned)")
    }

    /// Sequential requests after a target died: exactly `consecutive_failures` of them meet
    /// it (each retried on another target, so none fails), then it is out and no request
    /// tries it again.
    @Test func aDeadTargetIsOutAfterConsecutiveFailures() async throws {
        let redis = try await RedisServer()
        let upstreams = [try await EchoUpstreamProcess(), try await EchoUpstreamProcess(), try await EchoUpstreamProcess()]
        defer { for upstream in upstreams { upstream.stop() } }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: """
            routes:
              - name: sequential
                path_prefix: /sequential
                auth: none
                upstream: \(Self.list(upstreams))
                outlier: {consecutive_failures: 4, ejection_time: 60s}
                retries: {attempts: 2}
            """))
        for index in 0..<12 {
            #expect(try await DriverHTTP.call(gateway.baseURL + "/sequential/\(Self.run)-warm-\(index)").status == 200)
        }
        upstreams[2].stop()
        for index in 0..<60 {
            let answer = try await DriverHTTP.call(gateway.baseURL + "/sequential/\(Self.run)-after-\(index)")
            #expect(answer.status == 200, "\(answer)")
        }
        let metrics = try await DriverAPI.admin(gateway, .GET, "/metrics").text
        #expect(metrics.contains(#"gateway_upstream_retries_total{route="sequential",result="tried"} 4"#), "\(metrics.split(separator: "\n").filter { $0.contains("sequential") })")
        #expect(metrics.contains(#"gateway_upstream_ejections_total{route="sequential",target="\#(upstreams[2].url)"} 1"#))
        // The gauge of a fleet without active checks follows ejections within a second.
        try await eventually(timeout: .seconds(5)) {
            try await DriverAPI.admin(gateway, .GET, "/metrics").text
                .contains(#"gateway_upstream_target_healthy{route="sequential",target="\#(upstreams[2].url)"} 0"#)
        }
    }
}

extension UpstreamFleetProcessTests {
    /// Active checks take a dead target out and bring it back once it answers again, and the
    /// gauge says so.
    @Test func activeChecksTakeADeadTargetOutAndBringItBack() async throws {
        let redis = try await RedisServer()
        let steady = try await EchoUpstreamProcess()
        let flaky = try await EchoUpstreamProcess()
        defer { steady.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: """
            routes:
              - name: checked
                path_prefix: /checked
                auth: none
                upstream: [\(steady.url), \(flaky.url)]
                health_check: {path: /healthz, interval: 100ms, timeout: 100ms, healthy: 2, unhealthy: 2}
                retries: {attempts: 0}
            """))
        func gauge(_ value: Int) -> String { #"gateway_upstream_target_healthy{route="checked",target="\#(flaky.url)"} \#(value)"# }
        func metrics() async throws -> String { try await DriverAPI.admin(gateway, .GET, "/metrics").text }
        try await eventually(timeout: .seconds(10)) { try await metrics().contains(gauge(1)) }
        flaky.stop()
        try await eventually(timeout: .seconds(10)) { try await metrics().contains(gauge(0)) }
        #expect(try await metrics().contains(#"gateway_upstream_health_check_failures_total{route="checked",target="\#(flaky.url)",kind="refused"}"#))
        // Out: with no retries, every request still succeeds, on the one target left.
        for index in 0..<20 {
            let answer = try await DriverHTTP.call(gateway.baseURL + "/checked/\(Self.run)-out-\(index)")
            #expect(answer.status == 200, "\(answer)")
        }
        let back = try await EchoUpstreamProcess(port: flaky.port)
        defer { back.stop() }
        try await eventually(timeout: .seconds(10)) { try await metrics().contains(gauge(1)) }
        for index in 0..<20 {
            let answer = try await DriverHTTP.call(gateway.baseURL + "/checked/\(Self.run)-in-\(index)")
            #expect(answer.status == 200, "\(answer)")
        }
        // Round robin per event loop: half of them, give or take one per loop.
        #expect((8...12).contains(back.receivedPaths.filter { $0.hasPrefix("/checked/\(Self.run)-in-") }.count), "\(back.receivedPaths)")
    }
}

extension UpstreamFleetProcessTests {
    /// A reload replaces a route's targets: requests after it go to the new set only.
    @Test func aReloadChangesTheTargets() async throws {
        let redis = try await RedisServer()
        let upstreams = [try await EchoUpstreamProcess(), try await EchoUpstreamProcess(), try await EchoUpstreamProcess()]
        defer { for upstream in upstreams { upstream.stop() } }
        func yaml(_ targets: [EchoUpstreamProcess]) -> String {
            DriverYAML.make(redis: redis, extra: """
                routes:
                  - {name: moving, path_prefix: /moving, auth: none, upstream: \(Self.list(targets))}
                """)
        }
        let gateway = try await GatewayProcess(yaml: yaml([upstreams[0], upstreams[1]]))
        for index in 0..<20 {
            #expect(try await DriverHTTP.call(gateway.baseURL + "/moving/\(Self.run)-before-\(index)").status == 200)
        }
        #expect(upstreams[1].receivedPaths.contains { $0.hasPrefix("/moving/\(Self.run)-before-") })
        try yaml([upstreams[0], upstreams[2]]).write(toFile: gateway.configPath, atomically: true, encoding: .utf8)
        gateway.process.signal(SIGHUP)
        try await eventually(timeout: .seconds(10)) {
            try await DriverAPI.admin(gateway, .GET, "/metrics").text.contains(#"gateway_config_reloads_total{result="applied"} 1"#)
        }
        for index in 0..<20 {
            #expect(try await DriverHTTP.call(gateway.baseURL + "/moving/\(Self.run)-after-\(index)").status == 200)
        }
        #expect(!upstreams[1].receivedPaths.contains { $0.hasPrefix("/moving/\(Self.run)-after-") }, "a removed target got requests")
        // The removed target leaves the health gauge; the others stay in it.
        let metrics = try await DriverAPI.admin(gateway, .GET, "/metrics").text
        #expect(!metrics.contains(#"gateway_upstream_target_healthy{route="moving",target="\#(upstreams[1].url)"}"#), "\(metrics)")
        #expect(metrics.contains(#"gateway_upstream_target_healthy{route="moving",target="\#(upstreams[2].url)"} 1"#), "\(metrics)")
        #expect(upstreams[2].receivedPaths.filter { $0.hasPrefix("/moving/\(Self.run)-after-") }.count >= 5, "\(upstreams[2].receivedPaths)")
    }
}

/// A route whose every target is down answers at once, not after its timeout.
@Suite("Upstream fleets: no target left", .serialized, .timingSensitive)
struct UpstreamFleetUnavailableTests {
    @Test func allTargetsDownAnswerUpstreamUnavailableAtOnce() async throws {
        let redis = try await RedisServer()
        let ports = [LoopbackPort.free(), LoopbackPort.free(), LoopbackPort.free()]
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: """
            routes:
              - name: down
                path_prefix: /down
                auth: none
                timeout: 10s
                upstream: [\(ports.map { "http://127.0.0.1:\($0)" }.joined(separator: ", "))]
                outlier: {consecutive_failures: 1, max_ejected_percent: 100}
                retries: {attempts: 2}
            """))
        for method in [HTTPMethod.GET, .POST, .GET, .GET] {
            let answer = try await DriverHTTP.call(gateway.baseURL + "/down/x", method: method, body: method == .POST ? "{}" : nil)
            #expect(answer.status == 502, "\(answer)")
            #expect(answer.code == "UPSTREAM_UNAVAILABLE", "\(answer)")
            #expect(answer.elapsed < .milliseconds(100), "\(method): \(answer.elapsed)")
        }
        // Every target ejected: the last requests found none and did not try.
        let metrics = try await DriverAPI.admin(gateway, .GET, "/metrics").text
        #expect(metrics.contains(#"gateway_upstream_errors_total{route="down",kind="no_target"}"#), "\(metrics)")
    }
}

/// Every try is a span of its own: a failed one ends with its error, the next is its sibling.
@Suite("Upstream fleets: a span per try", .realProcesses)
struct UpstreamFleetTracingTests {
    @Test func aRetryIsASecondClientSpanUnderTheRequest() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let receiver = try await OTLPReceiver()
        let dead = LoopbackPort.free()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: """
            tracing: {otlp_endpoint: "\(receiver.endpoint)", sampling_ratio: 1.0}
            routes:
              - {name: tried, path_prefix: /tried, auth: none, upstream: [http://127.0.0.1:\(dead), \(upstream.url)]}
            """))
        let traceID = "4bf92f3577b34da6a3ce929d0e0e4737"
        // The first pick of a rotation is the first target: the dead one, then the retry.
        let answer = try await DriverHTTP.call(gateway.baseURL + "/tried/x", headers: [("traceparent", "00-\(traceID)-00f067aa0ba902b7-01")])
        #expect(answer.status == 200, "\(answer)")
        await gateway.stop()
        try await eventually(timeout: .seconds(10)) { receiver.spans.contains { $0.kind == "SPAN_KIND_SERVER" && $0.traceID == traceID } }
        let spans = receiver.spans.filter { $0.traceID == traceID }
        let server = try #require(spans.first { $0.kind == "SPAN_KIND_SERVER" })
        let calls = spans.filter { $0.kind == "SPAN_KIND_CLIENT" && $0.attribute("http.request.method") != nil }
        #expect(calls.count == 2, "\(calls.map(\.fields))")
        #expect(calls.allSatisfy { $0.parentSpanID == server.spanID })
        #expect(calls.contains { $0.attribute("server.port") as? Int == dead && $0.attribute("error.type") as? String == "refused" }, "\(calls.map(\.fields))")
        #expect(calls.contains { $0.attribute("server.port") as? Int == upstream.port && $0.attribute("http.response.status_code") as? Int == 200 })
    }
}
