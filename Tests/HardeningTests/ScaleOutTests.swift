import Foundation
import Testing
import TestSupport

/// SPEC §1 and §3: any number of gateway instances share one Redis; every limit is global
/// and every revocation reaches every instance within 1 s.
@Suite("Hardening: three gateway instances on one Redis", .serialized)
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
        let partner = try await API.partnerWithKey(gateways[0], name: "BurstyCo", rate: 0.001, burst: burst)
        let attempts = 45
        let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
            for index in 0..<attempts {
                let gateway = gateways[index % 3]
                group.addTask { try await API.mint(gateway, key: partner.key, phone: "98765\(String(format: "%05d", 200 + index))").status }
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
        let partner = try await API.partnerWithKey(gateways[0], name: "RevokedCo")
        let pair = try await API.login(gateways[1], phone: "9876500301")
        // Every instance has verified both, so both sit in each instance's caches.
        for gateway in gateways {
            #expect(try await API.whoami(gateway, key: partner.key).status == 200)
            #expect(try await API.profile(gateway, token: pair.accessToken).status == 200)
        }

        let clock = ContinuousClock()
        #expect(try await API.admin(gateways[0], .POST, "/v1/keys/\(partner.keyID)/revoke").status == 200)
        let keyRevoked = clock.now
        var keyTimes: [Duration] = []
        for gateway in gateways {
            try await eventually(timeout: .seconds(2), interval: .milliseconds(2)) {
                try await API.whoami(gateway, key: partner.key).status == 401
            }
            keyTimes.append(clock.now - keyRevoked)
        }

        #expect(try await API.admin(gateways[0], .POST, "/v1/users/\(pair.userID)/revoke-sessions").status == 200)
        let userRevoked = clock.now
        var userTimes: [Duration] = []
        for gateway in gateways {
            try await eventually(timeout: .seconds(2), interval: .milliseconds(2)) {
                try await API.profile(gateway, token: pair.accessToken).status == 401
            }
            userTimes.append(clock.now - userRevoked)
        }
        for time in keyTimes + userTimes { #expect(time < .seconds(1)) }
        // And it stays that way on every instance.
        for gateway in gateways {
            #expect(try await API.whoami(gateway, key: partner.key).status == 401)
            #expect(try await API.profile(gateway, token: pair.accessToken).status == 401)
            #expect(try await API.refresh(gateway, pair.refreshToken).status == 401)
        }
        print("key revocation on instance 1 honoured by instances 1/2/3 after \(keyTimes.map { "\($0.milliseconds)" }.joined(separator: "/")) ms; user session revocation after \(userTimes.map { "\($0.milliseconds)" }.joined(separator: "/")) ms (bound 1000 ms)")
    }
}
