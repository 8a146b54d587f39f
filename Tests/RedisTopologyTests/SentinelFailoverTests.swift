import Foundation
import Testing
import TestSupport

/// The gateway behind Redis Sentinel (1 primary, 1 replica, 3 sentinels): every flow works,
/// and when the primary is killed while 50 clients log in, refresh, mint SDK tokens and call
/// a bearer route, it moves to the promoted replica by itself. Prints how long until it
/// served again and how many requests failed, in all and by kind of call.
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
        // A partner rate far above the load, so mints are refused only by the failover.
        let partnerID = try await DriverAPI.createPartner(gateway, name: "FailoverCo", rate: 100_000, burst: 100_000)
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
                        let kind: OutcomeLog.Call
                        let answer: DriverResponse
                        // Every fourth step logs in anew, so logins go on through the kill
                        // like the other three kinds of call.
                        if let current = pair, step % 4 != 0 {
                            switch step % 4 {
                            case 1:
                                kind = .refresh
                                answer = try await DriverAPI.refresh(gateway, current.refreshToken)
                                if answer.status == 200 { pair = try DriverTokenPair(answer) } else if answer.status == 401 { pair = nil }
                            case 2:
                                kind = .mint
                                answer = try await DriverAPI.mint(gateway, key: key, phone: phone, driverID: "NY-\(client)")
                            default:
                                kind = .bearer
                                answer = try await DriverAPI.profile(gateway, token: current.accessToken)
                            }
                        } else {
                            kind = .login
                            // A failed trigger is the login's answer: verifying then would
                            // only count as a wrong code.
                            let sent = try await DriverAPI.trigger(gateway, phone: phone)
                            answer = sent.status == 200 ? try await DriverAPI.verify(gateway, phone: phone) : sent
                            if answer.status == 200 { pair = try DriverTokenPair(answer) }
                        }
                        log.record(at: clock.now, kind: kind, status: answer.status)
                    }
                }
            }
            clients.addTask {
                // The kill comes once every kind of call is flowing (each served 20 times).
                try await eventually(timeout: .seconds(60), interval: .milliseconds(50)) {
                    OutcomeLog.Call.allCases.allSatisfy { log.successes(of: $0) >= 20 }
                }
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
        for call in OutcomeLog.Call.allCases {
            print("  \(call.rawValue): \(summary.byCall[call].map(String.init(describing:)) ?? "no request")")
        }
        #expect(summary.servingAgain != nil)
        #expect(summary.serverErrors == 0, "only 503 may answer a failover: \(summary.byStatus)")
        // All four kinds of call went on through the failover and each was served again.
        for call in OutcomeLog.Call.allCases {
            #expect(summary.byCall[call]?.servedAgain == true, "\(call) after the kill: \(String(describing: summary.byCall[call]))")
        }
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
