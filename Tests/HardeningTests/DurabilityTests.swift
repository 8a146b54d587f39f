import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Nothing issued is lost when the gateway stops (gracefully or not) or Redis
/// restarts from its AOF; and what was revoked or spent stays dead.
@Suite("Hardening: durability", .serialized, .realProcesses)
struct DurabilityTests {
    @Test func sigtermLetsInFlightRequestsFinish() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: HardeningYAML.make(redis: redis, upstream: upstream))
        let count = 20
        let delay = 1500
        let requests = (0..<count).map { index in
            Task { try await DriverHTTP.call(gateway.baseURL + "/open/slow-\(index)?delay_ms=\(delay)") }
        }
        // Every request has reached the upstream, so each is in flight in the gateway.
        try await eventually(timeout: .seconds(10)) {
            upstream.log.components(separatedBy: "received GET /open/slow-").count - 1 == count
        }
        let clock = ContinuousClock()
        let signalled = clock.now
        gateway.process.signal(SIGTERM)
        // The listener stops taking new connections while the old ones drain.
        let closedAfter = try await eventually(timeout: .seconds(5), interval: .milliseconds(5)) {
            !LoopbackPort.isAccepting(gateway.port)
        }
        var statuses: [UInt] = []
        for request in requests {
            statuses.append((try? await request.value)?.status ?? 0)
        }
        let exit = try await gateway.process.waitForExit(timeout: .seconds(30))
        let exited = clock.now - signalled
        #expect(statuses == Array(repeating: 200, count: count), "\(statuses)")
        #expect(exit == 0)
        #expect(exited < .seconds(10))
        print("SIGTERM with \(count) requests in flight (upstream delay \(delay) ms): \(statuses.filter { $0 == 200 }.count)/\(count) answered 200, listener closed after \(closedAfter.milliseconds) ms, exit \(exit) after \(exited.milliseconds) ms")
    }

    @Test func killMinus9OfTheGatewayLosesNothing() async throws {
        let redis = try await RedisServer(appendOnly: true)
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let yaml = HardeningYAML.make(redis: redis, upstream: upstream)
        let first = try await GatewayProcess(yaml: yaml)
        let state = try await IssuedState.create(first)
        first.process.kill9()
        let second = try await GatewayProcess(yaml: yaml)
        let checked = try await state.expectIntact(second)
        print("gateway kill -9 and restart: \(checked)")
    }

    @Test func redisSigkillAndRestartFromItsAOFLosesNothing() async throws {
        let redis = try await RedisServer(appendOnly: true)
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let yaml = HardeningYAML.make(redis: redis, upstream: upstream)
        let first = try await GatewayProcess(yaml: yaml)
        let state = try await IssuedState.create(first)
        // Every write above was acknowledged; with appendfsync always it is on disk.
        redis.kill()
        first.process.kill9()
        try await redis.start()
        // A fresh gateway has no cache: everything it checks comes from the AOF.
        let second = try await GatewayProcess(yaml: yaml)
        let checked = try await state.expectIntact(second)
        print("redis SIGKILL and restart from its AOF: \(checked)")
    }

    @Test func theShippedRedisConfigFsyncsEveryWrite() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../config/redis.conf").standardized.path
        let settings = try String(contentsOfFile: path, encoding: .utf8).split(whereSeparator: \.isNewline)
            .filter { !$0.hasPrefix("#") }.map { $0.split(separator: " ").joined(separator: " ") }
        #expect(settings.contains("appendonly yes"))
        #expect(settings.contains("appendfsync always"))
        #expect(settings.contains("maxmemory-policy noeviction"))
    }
}

/// What a running deployment has issued: a partner with a live key and a revoked one, a
/// driver whose first refresh token was spent by a refresh.
private struct IssuedState {
    let partner: PartnerKey
    let revokedKey: String
    let phone: String
    let userID: String
    let spentRefreshToken: String
    let live: DriverTokenPair

    static func create(_ gateway: GatewayProcess) async throws -> IssuedState {
        let partner = try await DriverAPI.partnerWithKey(gateway, name: "DurableCo")
        let second = try await DriverAPI.admin(gateway, .POST, "/v1/partners/\(partner.partnerID)/keys")
        let revokedKey = try #require(second.string("key"))
        let revokedKeyID = try #require(second.string("key_id"))
        #expect(try await DriverAPI.admin(gateway, .POST, "/v1/keys/\(revokedKeyID)/revoke").status == 200)
        let phone = "9876500101"
        let login = try await DriverAPI.login(gateway, phone: phone)
        let live = try DriverTokenPair(try await DriverAPI.refresh(gateway, login.refreshToken))
        #expect(try await DriverAPI.whoami(gateway, key: partner.key).status == 200)
        return IssuedState(partner: partner, revokedKey: revokedKey, phone: phone, userID: login.userID, spentRefreshToken: login.refreshToken, live: live)
    }

    /// Checks everything through `gateway`; a summary of what was checked.
    func expectIntact(_ gateway: GatewayProcess) async throws -> String {
        let partners = try await DriverAPI.admin(gateway, .GET, "/v1/partners")
        #expect(partners.text.contains(partner.partnerID), "partner lost: \(partners)")
        let whoami = try await DriverAPI.whoami(gateway, key: partner.key)
        #expect(whoami.status == 200, "key lost: \(whoami)")
        let revoked = try await DriverAPI.whoami(gateway, key: revokedKey)
        #expect(revoked.status == 401, "a revoked key works again: \(revoked)")
        let profile = try await DriverAPI.profile(gateway, token: live.accessToken)
        #expect(profile.status == 200, "access token refused: \(profile)")
        // The live refresh token works (and is spent by this check) ...
        let refreshed = try await DriverAPI.refresh(gateway, live.refreshToken)
        #expect(refreshed.status == 200, "refresh token lost: \(refreshed)")
        // ... the one spent before the crash stays spent ...
        let spent = try await DriverAPI.refresh(gateway, spentRefreshToken)
        #expect(spent.status == 401 && spent.code == "INVALID_TOKEN", "a spent refresh token came back: \(spent)")
        // ... and the user is the same user.
        let again = try await DriverAPI.login(gateway, phone: phone)
        #expect(again.userID == userID, "user lost: a new user id for the same phone")
        return "partner, key, user, access and refresh token intact; revoked key 401, spent refresh token 401"
    }
}
