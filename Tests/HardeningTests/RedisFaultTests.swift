import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// When Redis is stopped, paused, restarted or full, every Redis-backed endpoint
/// fails closed with `503 SERVICE_UNAVAILABLE` within `redis.timeout` (+100 ms), leaves
/// nothing half done, and works again once Redis is back, without restarting the gateway.
@Suite("Hardening: Redis faults", .serialized, .timingSensitive)
struct RedisFaultTests {
    static let redisTimeout = Duration.milliseconds(250)
    static let bound = redisTimeout + .milliseconds(100)

    /// A gateway on a persistent Redis with a partner key and a logged-in driver.
    struct Fixture {
        let redis: RedisServer
        let gateway: GatewayProcess
        let partner: PartnerKey
        let pair: DriverTokenPair
        let otherSession: DriverTokenPair

        /// Set up at the 250 ms timeout the faults need: a setup call that fails closed starts
        /// the fixture again on fresh processes.
        init() async throws {
            self = try await ServiceUnavailableAnswer.startingOver { try await Self(freshProcesses: ()) }
        }

        private init(freshProcesses: Void) async throws {
            redis = try await RedisServer(appendOnly: true)
            gateway = try await GatewayProcess(yaml: HardeningYAML.make(redis: redis, redisTimeout: "250ms"))
            partner = try await DriverAPI.partnerWithKey(gateway, name: "FaultyCo")
            // One refresh first, so Redis has the rotation script cached: a fault must meet
            // the real EVALSHA, not a NOSCRIPT that would make the test pass by luck.
            let login = try await DriverAPI.login(gateway, phone: "9876500001")
            pair = try DriverTokenPair(try await DriverAPI.refresh(gateway, login.refreshToken).available("refresh"))
            otherSession = try await DriverAPI.login(gateway, phone: "9876500001")
            // The key is now in the gateway's cache, as for a partner in steady traffic.
            let minted = try await DriverAPI.mint(gateway, key: partner.key, phone: "9876500002").available("sdk mint")
            #expect(minted.status == 200)
        }

        /// Every Redis-backed call once, by name. The live refresh token is left out (the
        /// caller decides when to spend it); logout ends another session of the same driver.
        func probes() -> [(String, @Sendable () async throws -> DriverResponse)] {
            let gateway = gateway
            let partner = partner
            let other = otherSession
            return [
                ("otp trigger", { try await DriverAPI.trigger(gateway, phone: "9876500003") }),
                ("otp verify", { try await DriverAPI.verify(gateway, phone: "9876500001") }),
                ("refresh", { try await DriverAPI.refresh(gateway, String(repeating: "ab", count: 32)) }),
                ("logout", { try await DriverAPI.logout(gateway, access: other.accessToken) }),
                ("sdk mint", { try await DriverAPI.mint(gateway, key: partner.key, phone: "9876500004") }),
                ("admin create partner", { try await DriverAPI.admin(gateway, .POST, "/v1/partners", body: #"{"name": "Late"}"#) }),
                ("admin list keys", { try await DriverAPI.admin(gateway, .GET, "/v1/partners/\(partner.partnerID)/keys") }),
            ]
        }

        /// Runs every probe and checks each is a 503 in the error shape within the bound; the slowest.
        func expectAllFailClosed(_ fault: String) async throws -> Duration {
            var slowest = Duration.zero
            for (name, probe) in probes() {
                let answer = try await probe()
                #expect(answer.isServiceUnavailable, "\(fault): \(name) answered \(answer)")
                #expect(answer.elapsed < RedisFaultTests.bound, "\(fault): \(name) took \(answer.elapsed)")
                slowest = max(slowest, answer.elapsed)
            }
            let refresh = try await DriverAPI.refresh(gateway, pair.refreshToken)
            #expect(refresh.isServiceUnavailable, "\(fault): refresh of a live token answered \(refresh)")
            #expect(refresh.elapsed < RedisFaultTests.bound, "\(fault): refresh took \(refresh.elapsed)")
            return max(slowest, refresh.elapsed)
        }

        /// Once Redis answers again: the same gateway works, and the refresh token whose
        /// rotation failed during the fault is still the live one (nothing half done).
        func expectRecovered(_ fault: String, checkRefresh: Bool = true) async throws -> Duration {
            let waited = try await eventually(timeout: .seconds(10), interval: .milliseconds(20)) {
                try await DriverHTTP.call(gateway.baseURL + "/readyz").status == 200
            }
            if checkRefresh { try await expectRefreshTokenStillLive(fault) }
            let minted = try await retryingUnavailable { try await DriverAPI.mint(gateway, key: partner.key, phone: "9876500005") }
            #expect(minted.status == 200, "\(fault): sdk mint answered \(minted)")
            let triggered = try await retryingUnavailable { try await DriverAPI.trigger(gateway, phone: "9876500006") }
            #expect(triggered.status == 200, "\(fault): otp trigger answered \(triggered)")
            let keys = try await retryingUnavailable { try await DriverAPI.admin(gateway, .GET, "/v1/partners/\(partner.partnerID)/keys") }
            #expect(keys.status == 200, "\(fault): admin list keys answered \(keys)")
            return waited
        }

        /// The refresh that failed during the fault spent nothing: the token still refreshes.
        func expectRefreshTokenStillLive(_ fault: String) async throws {
            let refreshed = try await retryingUnavailable { try await DriverAPI.refresh(gateway, pair.refreshToken) }
            #expect(refreshed.status == 200, "\(fault): the old refresh token no longer works after the failed refresh: \(refreshed)")
        }

        /// `call`, again while it answers 503, for up to 2 s. `/readyz` follows the invalidation
        /// subscription; each event loop's pool connection comes back on its own within
        /// `reconnect_backoff` (100 ms) of its last failure, and a 503 meanwhile spends nothing,
        /// so the client retries it as any client would.
        private func retryingUnavailable(_ call: () async throws -> DriverResponse) async throws -> DriverResponse {
            var answer = try await call()
            let deadline = ContinuousClock.now + .seconds(2)
            while answer.isServiceUnavailable && ContinuousClock.now < deadline {
                answer = try await call()
            }
            return answer
        }
    }

    @Test func redisStoppedThenStartedAgain() async throws {
        let fixture = try await Fixture()
        await fixture.redis.stop()
        let slowest = try await fixture.expectAllFailClosed("redis stopped")
        try await fixture.redis.start()
        let recovery = try await fixture.expectRecovered("redis stopped")
        print("redis stopped: slowest 503 after \(slowest.milliseconds) ms (bound \(Self.bound.milliseconds) ms); ready again \(recovery.milliseconds) ms after redis started")
    }

    @Test func redisPausedWithClientPause() async throws {
        let fixture = try await Fixture()
        // Long enough for the 7 probes and the 6 triggers after them to time out in turn, each
        // within `bound`, plus slack: a pause that ended among them once let a trigger through.
        // `CLIENT UNPAUSE` below waits for the pause's end itself, so longer costs that wait.
        let pause = Self.bound * 13 + .seconds(1)
        let reply = try await fixture.redis.cli("CLIENT", "PAUSE", "\(pause.milliseconds)", "ALL")
        try #require(reply == "OK", "CLIENT PAUSE: \(reply)")
        let slowest = try await fixture.expectAllFailClosed("redis paused")
        var triggers: [Duration] = []
        for _ in 0..<6 {
            let answer = try await DriverAPI.trigger(fixture.gateway, phone: "9876500007")
            #expect(answer.isServiceUnavailable && answer.elapsed < Self.bound, "redis paused: trigger answered \(answer) after \(answer.elapsed)")
            triggers.append(answer.elapsed)
        }
        try await fixture.redis.cli("CLIENT", "UNPAUSE")
        let recovery = try await fixture.expectRecovered("redis paused")
        print("redis paused: slowest 503 after \(slowest.milliseconds) ms, then triggers after \(triggers.map { "\($0.milliseconds)" }.joined(separator: "/")) ms (bound \(Self.bound.milliseconds) ms); ready \(recovery.milliseconds) ms after unpause")
    }

    /// A hung Redis (SIGSTOP here; equally a fork stall or a network delay past
    /// `redis.timeout`) still answers 503 in time. Unlike `CLIENT PAUSE`, whose postponed
    /// commands Redis drops when the gateway closes the timed-out connection, the bytes of a
    /// command sent to a stopped process sit in the kernel and run when it wakes: the refresh
    /// the client was told failed (503) has in fact spent its token. Its retry comes within
    /// `tokens.refresh_reuse_interval` (10 s by default), so it is answered with the
    /// successor the late rotation stored, and that token works.
    @Test func redisFrozenWithSIGSTOP() async throws {
        let fixture = try await Fixture()
        fixture.redis.freeze()
        let slowest = try await fixture.expectAllFailClosed("redis frozen")
        fixture.redis.resume()
        let recovery = try await fixture.expectRecovered("redis frozen", checkRefresh: false)
        let retry = try await DriverAPI.refresh(fixture.gateway, fixture.pair.refreshToken)
        #expect(retry.status == 200, "redis frozen: the retry of the refresh that got 503 was refused: \(retry)")
        let successor = try DriverTokenPair(retry)
        #expect(successor.sessionID == fixture.pair.sessionID)
        let next = try await DriverAPI.refresh(fixture.gateway, successor.refreshToken)
        #expect(next.status == 200, "redis frozen: the token the retry got does not refresh: \(next)")
        print("redis frozen (SIGSTOP): slowest 503 after \(slowest.milliseconds) ms (bound \(Self.bound.milliseconds) ms); ready \(recovery.milliseconds) ms after SIGCONT; retrying the refresh that got 503: \(retry.status), and its token refreshes: \(next.status)")
    }

    @Test func redisRestartedUnderTheGateway() async throws {
        let fixture = try await Fixture()
        try await fixture.redis.restart()
        let recovery = try await fixture.expectRecovered("redis restarted")
        // Every piece of state survived the restart (the AOF), and the gateway reconnected.
        let again = try await DriverAPI.login(fixture.gateway, phone: "9876500001")
        #expect(again.userID == fixture.pair.userID)
        print("redis restarted (SIGTERM, AOF): gateway ready \(recovery.milliseconds) ms after redis accepted connections, no gateway restart")
    }

    /// `noeviction` with `maxmemory` reached: Redis refuses writes with `OOM ...`, which must
    /// be a 503 (not a 500), while reads keep working.
    @Test func redisFull() async throws {
        let fixture = try await Fixture()
        let redis = fixture.redis
        let info = try await redis.cli("INFO", "memory")
        let usedLine = try #require(info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("used_memory:") })
        let used = try #require(Int(usedLine.dropFirst("used_memory:".count).trimmingCharacters(in: .whitespaces)))
        try await redis.cli("CONFIG", "SET", "maxmemory", String(used + 512 * 1024))
        // One big value takes Redis past maxmemory: from then on every write is refused.
        try await redis.cli("SETRANGE", "hardening:filler", String(4 << 20), "x")
        let refused = try await redis.cli("SET", "hardening:probe", "1")
        try #require(refused.contains("OOM"), "redis is not full: \(refused)")

        var statuses: [String] = []
        var slowest = Duration.zero
        for (name, probe) in fixture.probes() {
            let answer = try await probe()
            statuses.append("\(name) \(answer.status)")
            #expect(answer.status != 500, "redis full: \(name) answered \(answer)")
            #expect(answer.status < 500 || answer.isServiceUnavailable, "redis full: \(name) answered \(answer)")
            #expect(answer.elapsed < Self.bound, "redis full: \(name) took \(answer.elapsed)")
            slowest = max(slowest, answer.elapsed)
        }
        // Writes that start with a write fail as a whole: a new OTP cannot be stored.
        let trigger = try await DriverAPI.trigger(fixture.gateway, phone: "9876500008")
        #expect(trigger.isServiceUnavailable, "redis full: trigger answered \(trigger)")
        // Bearer routes and reads need no write.
        #expect(try await DriverHTTP.call(fixture.gateway.baseURL + "/readyz").status == 200)

        try await redis.cli("DEL", "hardening:filler")
        try await redis.cli("CONFIG", "SET", "maxmemory", "0")
        let recovery = try await fixture.expectRecovered("redis full")
        print("redis full (noeviction): \(statuses.joined(separator: ", ")); slowest \(slowest.milliseconds) ms; working again \(recovery.milliseconds) ms after memory was freed")
    }
}
