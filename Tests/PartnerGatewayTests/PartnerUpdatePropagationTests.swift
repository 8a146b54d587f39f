import Foundation
import Testing
import TestSupport

/// A partner update made on one gateway instance holds on every instance within a second,
/// the way a key revocation does: the update publishes the partner's invalidation, and each
/// instance drops the partner record its key cache holds (otherwise kept for 5 s).
@Suite("Partner updates reach every instance", .serialized, .timingSensitive)
struct PartnerUpdatePropagationTests {
    @Test func aNewBurstIsUsedByEveryInstanceWithinOneSecond() async throws {
        let redis = try await RedisServer()
        let yaml = """
            redis:
              url: \(redis.url)
              timeout: \(GatewayProcess.redisTimeout)
            otp:
              mode: uat
            """
        let gateways = [try await GatewayProcess(yaml: yaml), try await GatewayProcess(yaml: yaml)]
        let partnerID = try await DriverAPI.createPartner(gateways[0], name: "Growing", rate: 1000, burst: 100)
        let key = try await DriverAPI.createKey(gateways[0], partnerID: partnerID)
        var phone = 9_876_510_000
        func mintLimit(_ gateway: GatewayProcess) async throws -> String? {
            phone += 1
            let answer = try await DriverAPI.mint(gateway, key: key, phone: String(phone), driverID: "D\(phone)")
            try #require(answer.status == 200, "\(answer)")
            return answer.header("RateLimit-Limit")
        }
        // Both instances have verified the key, so both hold the partner in their caches.
        for gateway in gateways { #expect(try await mintLimit(gateway) == "100") }

        let clock = ContinuousClock()
        let update = try await DriverAPI.admin(gateways[0], .PATCH, "/v1/partners/\(partnerID)", body: #"{"burst": 37, "name": "Grown"}"#)
        #expect(update.status == 200, "\(update)")
        let done = clock.now
        var times: [Duration] = []
        for gateway in gateways {
            try await eventually(timeout: .seconds(3), interval: .milliseconds(5)) { try await mintLimit(gateway) == "37" }
            times.append(clock.now - done)
        }
        for time in times { #expect(time < .seconds(1)) }
        for gateway in gateways {
            #expect(try await mintLimit(gateway) == "37", "it stays that way")
            let shown = try await DriverAPI.admin(gateway, .GET, "/v1/partners/\(partnerID)")
            #expect(shown.string("name") == "Grown")
        }
        print("partner update on instance 1 used by instances 1/2 after \(times.map { "\($0.components.attoseconds / 1_000_000_000_000_000 + $0.components.seconds * 1000)" }.joined(separator: "/")) ms (bound 1000 ms)")
    }
}
