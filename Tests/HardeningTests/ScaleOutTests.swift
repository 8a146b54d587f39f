import Foundation
import Testing
import TestSupport

/// Any number of gateway instances share one Redis; every limit is global
/// and every revocation reaches every instance within 1 s.
@Suite("Hardening: three gateway instances on one Redis", .serialized, .timingSensitive)
struct ScaleOutTests {
    static func startThree(_ yaml: String) async throws -> [GatewayProcess] {
        var gateways: [GatewayProcess] = []
        for _ in 0..<3 { gateways.append(try await GatewayProcess(yaml: yaml)) }
        return gateways
    }

    @Test func aPartnersBurstIsSharedByAllInstances() async throws {
        let redis = try await RedisServer()
        let gateways = try await Self.startThree(HardeningYAML.make(redis: redis))
        let burst = 10
        let partner = try await DriverAPI.partnerWithKey(gateways[0], name: "BurstyCo", rate: 0.001, burst: burst)
        let attempts = 45
        let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
            for index in 0..<attempts {
                let gateway = gateways[index % 3]
                group.addTask { try await DriverAPI.mint(gateway, key: partner.key, phone: "98765\(String(format: "%05d", 200 + index))").status }
            }
            return try await group.reduce(into: [UInt]()) { $0.append($1) }
        }
        let successes = statuses.filter { $0 == 200 }.count
        let limited = statuses.filter { $0 == 429 }.count
        #expect(successes == burst, "\(statuses)")
        #expect(limited == attempts - burst, "\(statuses)")
        print("partner burst \(burst), \(attempts) concurrent SDK mints over 3 instances: \(successes) x 200, \(limited) x 429")
    }

    @Test func revocationsReachEveryInstanceWithinOneSecond() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateways = try await Self.startThree(HardeningYAML.make(redis: redis, upstream: upstream))
        let partner = try await DriverAPI.partnerWithKey(gateways[0], name: "RevokedCo")
        let pair = try await DriverAPI.login(gateways[1], phone: "9876500301")
        // Every instance has verified both, so both sit in each instance's caches.
        for gateway in gateways {
            #expect(try await DriverAPI.whoami(gateway, key: partner.key).status == 200)
            #expect(try await DriverAPI.profile(gateway, token: pair.accessToken).status == 200)
        }

        let (keyRevoke, keyTimes) = try await Self.timesUntilEvery(gateways, after: {
            try await DriverAPI.admin(gateways[0], .POST, "/v1/keys/\(partner.keyID)/revoke")
        }) { try await DriverAPI.whoami($0, key: partner.key).status == 401 }
        #expect(keyRevoke.status == 200)
        let (userRevoke, userTimes) = try await Self.timesUntilEvery(gateways, after: {
            try await DriverAPI.admin(gateways[0], .POST, "/v1/users/\(pair.userID)/revoke-sessions")
        }) { try await DriverAPI.profile($0, token: pair.accessToken).status == 401 }
        #expect(userRevoke.status == 200)
        for time in keyTimes + userTimes { #expect(time < .seconds(1)) }
        // And it stays that way on every instance.
        for gateway in gateways {
            #expect(try await DriverAPI.whoami(gateway, key: partner.key).status == 401)
            #expect(try await DriverAPI.profile(gateway, token: pair.accessToken).status == 401)
            #expect(try await DriverAPI.refresh(gateway, pair.refreshToken).status == 401)
        }
        print("key revocation on instance 1 honoured by instances 1/2/3 after \(keyTimes.map { "\($0.milliseconds)" }.joined(separator: "/")) ms; user session revocation after \(userTimes.map { "\($0.milliseconds)" }.joined(separator: "/")) ms (bound 1000 ms)")
    }

    /// A refresh token presented again after its successor was used is reuse: 401, and the
    /// whole session is refused on every instance within 1 s (the reuse interval forgives
    /// only a retry whose successor is still unused).
    @Test func reuseAfterTheSuccessorWasUsedRevokesTheSessionOnEveryInstance() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateways = try await Self.startThree(HardeningYAML.make(redis: redis, upstream: upstream))
        let login = try await DriverAPI.login(gateways[0], phone: "9876500311")
        // The login's token is spent, and so is its successor: the login's token is now
        // neither current nor the current token's predecessor.
        let refreshed = try DriverTokenPair(try await DriverAPI.refresh(gateways[1], login.refreshToken))
        let current = try DriverTokenPair(try await DriverAPI.refresh(gateways[2], refreshed.refreshToken))
        for gateway in gateways {
            #expect(try await DriverAPI.profile(gateway, token: current.accessToken).status == 200)
        }
        let (reuse, times) = try await Self.timesUntilEvery(gateways, after: {
            try await DriverAPI.refresh(gateways[0], login.refreshToken)
        }) { try await DriverAPI.profile($0, token: current.accessToken).status == 401 }
        #expect(reuse.status == 401, "\(reuse)")
        #expect(reuse.code == "INVALID_TOKEN")
        for time in times { #expect(time < .seconds(1)) }
        for gateway in gateways {
            #expect(try await DriverAPI.refresh(gateway, current.refreshToken).status == 401)
            #expect(try await DriverAPI.profile(gateway, token: refreshed.accessToken).status == 401)
        }
        print("refresh-token reuse on instance 1: the session refused by instances 1/2/3 after \(times.map { "\($0.milliseconds)" }.joined(separator: "/")) ms (bound 1000 ms)")
    }

    /// Runs `action`; its response, and how long after it each of `gateways` first satisfies
    /// `condition` (checked every 2 ms, for up to 2 s each).
    static func timesUntilEvery(
        _ gateways: [GatewayProcess],
        after action: () async throws -> DriverResponse,
        _ condition: @escaping (GatewayProcess) async throws -> Bool
    ) async throws -> (DriverResponse, [Duration]) {
        let clock = ContinuousClock()
        let answer = try await action()
        let done = clock.now
        var times: [Duration] = []
        for gateway in gateways {
            try await eventually(timeout: .seconds(2), interval: .milliseconds(2)) { try await condition(gateway) }
            times.append(clock.now - done)
        }
        return (answer, times)
    }
}
