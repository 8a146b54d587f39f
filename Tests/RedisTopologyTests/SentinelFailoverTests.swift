import Foundation
import Synchronization
import Testing
import TestSupport

/// The gateway behind Redis Sentinel (1 primary, 1 replica, 3 sentinels): every flow works,
/// and when the primary is killed under load it moves to the promoted replica by itself.
@Suite(.serialized, .timingSensitive) struct SentinelFailoverTests {
    @Test func thePrimaryIsKilledWhileFiftyClientsWork() async throws {
        let group = try await RedisSentinelGroup()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        // The URL's host and port are not used with Sentinel; only its scheme, user and db.
        let gateway = try await GatewayProcess(yaml: GatewayFlow.yaml(
            redisURL: "redis://127.0.0.1:1/0", redisExtra: group.yaml, timeout: "500ms", upstream: upstream
        ))
        try await GatewayFlow(gateway: gateway).run(phonePrefix: "987650")
        let partnerID = try await DriverAPI.createPartner(gateway, name: "FailoverCo")
        let key = try await DriverAPI.createKey(gateway, partnerID: partnerID)
        let oldPrimary = group.primary.port

        let log = OutcomeLog()
        let clock = ContinuousClock()
        try await withThrowingTaskGroup(of: Void.self) { clients in
            for client in 0..<50 {
                clients.addTask {
                    let phone = "98766\(String(format: "%05d", client))"
                    var pair: DriverTokenPair?
                    var step = 0
                    while !log.isStopped {
                        step += 1
                        let answer: DriverAnswer
                        if let current = pair {
                            switch step % 3 {
                            case 0:
                                answer = try await DriverAPI.refresh(gateway, current.refreshToken)
                                if answer.status == 200 { pair = try DriverTokenPair(answer) } else if answer.status == 401 { pair = nil }
                            case 1:
                                answer = try await DriverAPI.mint(gateway, key: key, phone: phone, driverID: "NY-\(client)")
                            default:
                                answer = try await DriverAPI.profile(gateway, token: current.accessToken)
                            }
                        } else {
                            _ = try await DriverAPI.trigger(gateway, phone: phone)
                            answer = try await DriverAPI.verify(gateway, phone: phone)
                            if answer.status == 200 { pair = try DriverTokenPair(answer) }
                        }
                        log.record(at: clock.now, status: answer.status)
                    }
                }
            }
            clients.addTask {
                try await Task.sleep(for: .seconds(2))
                let killed = clock.now
                log.killed(at: killed)
                group.primary.kill()
                // Traffic goes on until the sentinels have promoted the replica and the gateway
                // has answered without a failure for two seconds, or 40 s at most.
                let deadline = clock.now + .seconds(40)
                while clock.now < deadline {
                    try await Task.sleep(for: .milliseconds(200))
                    if let last = log.lastFailure(), last > killed, clock.now - last > .seconds(2) { break }
                }
                log.stop()
            }
            try await clients.waitForAll()
        }
        let killed = try #require(log.killedAt)
        let newPrimary = try await group.primaryPort()
        #expect(newPrimary == group.replica.port, "sentinels name \(String(describing: newPrimary)), old primary was \(oldPrimary)")
        let summary = log.summary(after: killed)
        print("sentinel failover under 50 clients: \(summary.total) requests after the kill, \(summary.failed) failed (\(summary.byStatus)); serving again \(summary.servingAgain.map { "\($0)" } ?? "never") after the kill")
        #expect(summary.servingAgain != nil)
        #expect(summary.serverErrors == 0, "only 503 may answer a failover: \(summary.byStatus)")
        // After the failover everything works on the new primary, without a gateway restart.
        try await GatewayFlow(gateway: gateway).run(phonePrefix: "987651")
        #expect(try await DriverHTTP.call(gateway.baseURL + "/readyz").status == 200)
        // Metrics name the new primary and count the failover.
        let metrics = try await DriverHTTP.call(gateway.adminURL + "/metrics").text
        #expect(metrics.contains("gateway_redis_failovers_total 1"), "\(metrics.split(separator: "\n").filter { $0.contains("redis") })")
        #expect(metrics.contains("gateway_redis_primary{address=\"127.0.0.1:\(group.replica.port)\",topology=\"sentinel\"} 1"))
        #expect(metrics.contains("gateway_redis_primary{address=\"127.0.0.1:\(oldPrimary)\",topology=\"sentinel\"} 0"))
    }
}

/// Every answer's time and status, from all clients, and when the primary was killed.
final class OutcomeLog: Sendable {
    private let entries = Mutex<[(ContinuousClock.Instant, UInt)]>([])
    private let kill = Mutex<ContinuousClock.Instant?>(nil)
    private let stopped = Atomic<Bool>(false)

    var isStopped: Bool { stopped.load(ordering: .relaxed) }
    func stop() { stopped.store(true, ordering: .relaxed) }
    var killedAt: ContinuousClock.Instant? { kill.withLock { $0 } }
    func killed(at time: ContinuousClock.Instant) { kill.withLock { $0 = time } }

    func record(at time: ContinuousClock.Instant, status: UInt) {
        entries.withLock { $0.append((time, status)) }
    }

    /// Failures are 5xx answers: what Redis being away looks like to a client.
    func lastFailure() -> ContinuousClock.Instant? {
        entries.withLock { $0.last { $0.1 >= 500 }?.0 }
    }

    struct Summary {
        let total: Int
        let failed: Int
        let serverErrors: Int
        let byStatus: [UInt: Int]
        /// From the kill to the first success after the last failure.
        let servingAgain: Duration?
    }

    func summary(after killed: ContinuousClock.Instant) -> Summary {
        let after = entries.withLock { $0.filter { $0.0 >= killed } }.sorted { $0.0 < $1.0 }
        let failures = after.filter { $0.1 >= 500 }
        var byStatus: [UInt: Int] = [:]
        for entry in after { byStatus[entry.1, default: 0] += 1 }
        let lastFailure = failures.last?.0 ?? killed
        let firstSuccess = after.first { $0.0 > lastFailure && $0.1 < 500 }?.0
        return Summary(
            total: after.count, failed: failures.count,
            serverErrors: failures.filter { $0.1 != 503 }.count,
            byStatus: byStatus, servingAgain: firstSuccess.map { $0 - killed }
        )
    }
}
