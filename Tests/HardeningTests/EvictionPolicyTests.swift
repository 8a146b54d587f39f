import Foundation
import Testing
import TestSupport

/// A Redis that may evict keys could drop partners, sessions and revocations when full, so
/// the gateway refuses to start against one (`RedisEvictionPolicyCheck`, through `INFO` or
/// `CONFIG`). A Redis that forbids both or cannot be reached yet only gets a warning.
@Suite("Hardening: Redis eviction policy at start-up", .serialized, .realProcesses)
struct EvictionPolicyTests {
    @Test func anEvictingRedisStopsStartUpWithOneClearLine() async throws {
        // RedisServer passes `--maxmemory-policy noeviction`; a later argument wins.
        let redis = try await RedisServer(extraArguments: ["--maxmemory-policy", "allkeys-lru"])
        #expect(try await redis.cli("CONFIG", "GET", "maxmemory-policy").hasSuffix("allkeys-lru"))
        let gateway = try await GatewayProcess(yaml: HardeningYAML.make(redis: redis), waitUntilListening: false)
        let clock = ContinuousClock()
        let start = clock.now
        let status = try await gateway.process.waitForExit(timeout: .seconds(20))
        let took = clock.now - start
        let lines = gateway.log.split(whereSeparator: \.isNewline).filter { $0.contains("maxmemory-policy") }
        #expect(status != 0)
        #expect(lines.count == 1, "\(gateway.log)")
        #expect(lines.first?.contains("allkeys-lru") == true && lines.first?.contains("noeviction") == true)
        #expect(!LoopbackPort.isAccepting(gateway.port))
        print("maxmemory-policy allkeys-lru: gateway exited with status \(status) after \(took.milliseconds) ms: \(lines.first ?? "")")
    }

    @Test func aRedisWithoutConfigIsCheckedThroughInfo() async throws {
        let redis = try await RedisServer(extraArguments: ["--rename-command", "CONFIG", "", "--maxmemory-policy", "volatile-lru"])
        let gateway = try await GatewayProcess(yaml: HardeningYAML.make(redis: redis), waitUntilListening: false)
        #expect(try await gateway.process.waitForExit(timeout: .seconds(20)) == 1)
        let lines = gateway.log.split(whereSeparator: \.isNewline).filter { $0.contains("maxmemory-policy") }
        #expect(lines.count == 1 && lines[0].contains("volatile-lru"), "\(gateway.log)")
    }

    @Test func aRedisWithoutConfigOrInfoOnlyWarns() async throws {
        let redis = try await RedisServer(extraArguments: ["--rename-command", "CONFIG", "", "--rename-command", "INFO", ""])
        let gateway = try await GatewayProcess(yaml: HardeningYAML.make(redis: redis))
        #expect(try await DriverHTTP.call(gateway.baseURL + "/readyz").status == 200)
        let warning = gateway.log.split(whereSeparator: \.isNewline).first { $0.contains("maxmemory-policy") }
        #expect(warning?.contains("warning") == true, "\(gateway.log)")
        print("CONFIG and INFO renamed away: gateway started and warned: \(warning ?? "")")
    }

    /// As before the check existed: the gateway starts without Redis, says not ready, and
    /// becomes ready by itself when Redis appears.
    @Test func anUnreachableRedisAtStartUpOnlyWarns() async throws {
        let redis = try await RedisServer()
        await redis.stop()
        let gateway = try await GatewayProcess(yaml: HardeningYAML.make(redis: redis))
        #expect(try await DriverHTTP.call(gateway.baseURL + "/healthz").status == 200)
        #expect(try await DriverHTTP.call(gateway.baseURL + "/readyz").isServiceUnavailable)
        try await redis.start()
        let ready = try await eventually(timeout: .seconds(10), interval: .milliseconds(20)) {
            try await DriverHTTP.call(gateway.baseURL + "/readyz").status == 200
        }
        let warning = gateway.log.split(whereSeparator: \.isNewline).first { $0.contains("maxmemory-policy") }
        #expect(warning?.contains("warning") == true, "\(gateway.log)")
        print("redis unreachable at start-up: gateway started (healthz 200, readyz 503), ready \(ready.milliseconds) ms after redis started")
    }
}
