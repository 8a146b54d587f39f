import Foundation
import Synchronization
import Testing
import TestSupport

/// The gateway on Redis Cluster (3 primaries, 3 replicas): every flow, two instances that see
/// each other's revocations, exact rate limits under concurrency, and a slot migration and a
/// primary failover under traffic with no wrong answer.
@Suite(.serialized, .timingSensitive) struct ClusterGatewayTests {
    /// `GatewayFlow`'s configuration on the cluster, plus a route limited to `burst` calls per
    /// user and a route for API keys.
    private static func yaml(_ cluster: RedisClusterGroup, upstream: EchoUpstreamProcess, burst: Int) -> String {
        // The URL's host and port are not used on a cluster; its scheme, user and db are.
        GatewayFlow.yaml(redisURL: "redis://127.0.0.1:1/0", redisExtra: cluster.yaml, upstream: upstream) + """
          - {name: burst, path_prefix: /burst, upstream: \(upstream.url), auth: bearer, rate_limit: {per: user, capacity: \(burst), refill_per_second: 0.001}}
          - {name: partner-echo, path_prefix: /partner-echo, upstream: \(upstream.url), auth: api_key}

        """
    }

    @Test func everyFlowWorksOnTwoInstances() async throws {
        let cluster = try await RedisClusterGroup()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let yaml = Self.yaml(cluster, upstream: upstream, burst: 20)
        let first = try await GatewayProcess(yaml: yaml)
        let second = try await GatewayProcess(yaml: yaml)
        try await GatewayFlow(gateway: first).run(phonePrefix: "987640")
        try await GatewayFlow(gateway: second).run(phonePrefix: "987641")

        // /readyz is ready; the admin status names the topology; metrics name the three primaries.
        #expect(try await DriverHTTP.call(second.baseURL + "/readyz").status == 200)
        let status = try await DriverAPI.admin(second, .GET, "/v1/status")
        #expect(status.status == 200, "\(status)")
        let redis = try #require(status.json["redis"] as? [String: Any])
        #expect(redis["uncovered_slots"] as? Int == 0, "\(status)")
        #expect(redis["mode"] as? String == "cluster")
        let primaries = Set((redis["primaries"] as? [String] ?? []).compactMap { $0.split(separator: ":").last.flatMap { Int($0) } })
        #expect(primaries == (try await cluster.primaryPorts()))
        let metrics = try await DriverHTTP.call(first.adminURL + "/metrics").text
        #expect(metrics.split(separator: "\n").filter { $0.hasPrefix("gateway_redis_primary{") && $0.contains("topology=\"cluster\"} 1") }.count == 3, "\(metrics.split(separator: "\n").filter { $0.contains("gateway_redis_primary") })")

        // A logout and an admin revocation on one instance reach the other within a second.
        let driver = try await DriverAPI.login(first, phone: "9876420001")
        #expect(try await DriverAPI.profile(second, token: driver.accessToken).status == 200)
        let clock = ContinuousClock()
        var started = clock.now
        #expect(try await DriverAPI.logout(first, access: driver.accessToken).status == 204)
        try await eventually(timeout: .seconds(1)) { try await DriverAPI.profile(second, token: driver.accessToken).status == 401 }
        print("cluster: a logout on one instance refused on the other after \(clock.now - started)")
        let revoked = try await DriverAPI.login(second, phone: "9876420002")
        #expect(try await DriverAPI.profile(first, token: revoked.accessToken).status == 200)
        started = clock.now
        #expect(try await DriverAPI.admin(second, .POST, "/v1/users/\(revoked.userID)/revoke-sessions").status == 200)
        try await eventually(timeout: .seconds(1)) { try await DriverAPI.profile(first, token: revoked.accessToken).status == 401 }
        print("cluster: a user revocation on one instance refused on the other after \(clock.now - started)")

        // An API-key route, a key rotation (both keys work in the grace), then revocation.
        let partnerID = try await DriverAPI.createPartner(first, name: "ClusterCo")
        let key = try await DriverAPI.createKey(first, partnerID: partnerID)
        #expect(try await DriverHTTP.call(second.baseURL + "/partner-echo/x", headers: [("X-API-Key", key)]).status == 200)
        let whoami = try await DriverHTTP.call(first.baseURL + "/partner/v1/whoami", headers: [("X-API-Key", key)])
        let keyID = try #require(whoami.string("key_id"))
        let rotation = try await DriverAPI.admin(first, .POST, "/v1/keys/\(keyID)/rotate", body: #"{"grace": "1h"}"#)
        #expect(rotation.status == 200, "rotate: \(rotation)")
        let newKey = try #require(rotation.string("key"))
        let newKeyID = try #require(rotation.string("key_id"))
        for gateway in [first, second] {
            #expect(try await DriverHTTP.call(gateway.baseURL + "/partner-echo/x", headers: [("X-API-Key", newKey)]).status == 200)
            #expect(try await DriverHTTP.call(gateway.baseURL + "/partner-echo/x", headers: [("X-API-Key", key)]).status == 200)
        }
        #expect(try await DriverAPI.admin(second, .POST, "/v1/keys/\(keyID)/revoke").status == 200)
        try await eventually(timeout: .seconds(1)) {
            try await DriverHTTP.call(first.baseURL + "/partner-echo/x", headers: [("X-API-Key", key)]).status == 401
        }
        #expect(try await DriverHTTP.call(first.baseURL + "/partner-echo/x", headers: [("X-API-Key", newKey)]).status == 200)
        #expect(try await DriverAPI.admin(first, .GET, "/v1/keys/\(newKeyID)").status == 200)

        // 50 concurrent clients on both instances share one user's limit of 20: exactly 20 pass.
        let limited = try await DriverAPI.login(first, phone: "9876420003")
        let statuses = try await withThrowingTaskGroup(of: [UInt].self) { group in
            for client in 0..<50 {
                group.addTask {
                    var answers: [UInt] = []
                    for call in 0..<2 {
                        let gateway = (client + call) % 2 == 0 ? first : second
                        answers.append(try await DriverHTTP.call(gateway.baseURL + "/burst/x", headers: [("Authorization", "Bearer \(limited.accessToken)")]).status)
                    }
                    return answers
                }
            }
            return try await group.reduce(into: [UInt]()) { $0 += $1 }
        }
        #expect(statuses.filter { $0 == 200 }.count == 20, "\(Dictionary(grouping: statuses) { $0 }.mapValues(\.count))")
        #expect(statuses.filter { $0 == 429 }.count == 80)
    }

    @Test func aSlotMigrationAndAPrimaryFailoverUnderTrafficGiveNoWrongResponse() async throws {
        let cluster = try await RedisClusterGroup()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let capacity = 300
        let gateway = try await GatewayProcess(yaml: Self.yaml(cluster, upstream: upstream, burst: capacity))
        let driver = try await DriverAPI.login(gateway, phone: "9876430001")
        let authorization = [("Authorization", "Bearer \(driver.accessToken)")]
        #expect(try await DriverHTTP.call(gateway.baseURL + "/burst/x", headers: authorization).status == 200)
        let bucket = "pg:rl:{route:burst:user:\(driver.userID)}"
        let slot = try await cluster.slot(of: bucket)
        #expect(try await cluster.node(try #require(try await cluster.primaryPort(forSlot: slot)))!.cli("EXISTS", bucket) == "1", "bucket key is \(bucket)")

        let allowed = Counted()
        let profiles = Counted()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    while !allowed.isStopped {
                        let answer = try await DriverHTTP.call(gateway.baseURL + "/burst/x", headers: authorization)
                        allowed.record(answer.status)
                        // The session open and refresh keys live elsewhere: they keep working too.
                        profiles.record(try await DriverAPI.profile(gateway, token: driver.accessToken).status)
                    }
                }
            }
            group.addTask {
                // The bucket's slot moves to another primary key by key, then that primary's
                // replica takes over, while the 50 clients keep spending the bucket.
                let target = try await cluster.migrate(slot: slot) { try await Task.sleep(for: .milliseconds(50)) }
                try await Task.sleep(for: .milliseconds(300))
                try await cluster.failOver(primaryPort: target)
                try await Task.sleep(for: .milliseconds(500))
                allowed.stop()
            }
            try await group.waitForAll()
        }
        let statuses = allowed.statuses
        print("cluster migration and failover under 50 clients: limited route \(Dictionary(grouping: statuses) { $0 }.mapValues(\.count)), profile \(Dictionary(grouping: profiles.statuses) { $0 }.mapValues(\.count))")
        #expect(statuses.allSatisfy { [200, 429].contains($0) }, "only allowed or limited")
        #expect(profiles.statuses.allSatisfy { $0 == 200 })
        // No decision was lost or made twice while the bucket moved between nodes: the calls
        // allowed (one before the traffic, those during it, and one after) are exactly what the
        // bucket lost, or, once it is empty, exactly its capacity.
        let passed = statuses.filter { $0 == 200 }.count
        let after = try await DriverHTTP.call(gateway.baseURL + "/burst/x", headers: authorization)
        let remaining = try #require(after.header("RateLimit-Remaining").flatMap { Int($0) })
        if after.status == 200 {
            #expect(remaining == capacity - passed - 2, "\(passed) passed during the traffic")
        } else {
            #expect(after.status == 429)
            #expect(passed == capacity - 1 && remaining == 0)
        }
        // The promoted replica is noticed when the slot map is read again, which a MOVED
        // starts and which may finish after the request that met it was answered.
        try await eventually(timeout: .seconds(5)) {
            Self.value(of: "gateway_redis_failovers_total", in: try await DriverHTTP.call(gateway.adminURL + "/metrics").text) >= 1
        }
        let metrics = try await DriverHTTP.call(gateway.adminURL + "/metrics").text
        let ask = Self.value(of: #"gateway_redis_redirections_total{kind="ask"}"#, in: metrics)
        let moved = Self.value(of: #"gateway_redis_redirections_total{kind="moved"}"#, in: metrics)
        let failovers = Self.value(of: "gateway_redis_failovers_total", in: metrics)
        print("cluster redirections followed: ask \(ask), moved \(moved); failovers seen \(failovers)")
        #expect(ask > 0, "the ASK path was exercised")
        #expect(moved > 0, "the MOVED path was exercised")
        #expect(failovers >= 1)
        // Everything works after, without a restart.
        try await GatewayFlow(gateway: gateway).run(phonePrefix: "987644")
    }

    private static func value(of series: String, in metrics: String) -> Double {
        metrics.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }
}

/// Statuses from every client, and when to stop.
private final class Counted: Sendable {
    private let state = Mutex((statuses: [UInt](), stopped: false))
    func record(_ status: UInt) { state.withLock { $0.statuses.append(status) } }
    var statuses: [UInt] { state.withLock { $0.statuses } }
    var isStopped: Bool { state.withLock { $0.stopped } }
    func stop() { state.withLock { $0.stopped = true } }
}
