import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// A logout, a key revocation and a partner disable, made on one gateway instance, are refused
/// through nginx in front of either of two instances within a second: the authorization
/// listener reads the same in-memory revocations and key cache the proxy does, which every
/// instance's invalidation subscriber keeps current. It takes the whole process budget, since
/// its assertions are wall-clock bounds.
@Suite("Edges: revocations through nginx on every instance", .timingSensitive)
struct EdgeRevocationTests {
    @Test func aLogoutAKeyRevocationAndAPartnerDisableAreRefusedWithinOneSecondEverywhere() async throws {
        let setup = try await EdgeSetup.start(instances: 2)
        defer { setup.upstream.stop() }
        var edges: [ForwardAuthEdge] = []
        for gateway in setup.gateways {
            edges.append(try await setup.edge(.nginx, asking: gateway))
        }
        let login = try await DriverAPI.login(setup.gateway, phone: "9876500201")
        let (_, keyID, key) = try await setup.partnerAndKey()
        let (partnerID, _, partnerKey) = try await setup.partnerAndKey()
        let token = [("Authorization", "Bearer \(login.accessToken)")]

        /// Waits until every edge refuses `path` with `headers` with `code`; how long each took
        /// from `start`.
        func refusedEverywhere(_ path: String, _ headers: [(String, String)], code: String, since start: ContinuousClock.Instant) async throws -> [Duration] {
            var times: [Duration] = []
            for edge in edges {
                try await eventually(timeout: .seconds(5), interval: .milliseconds(5)) {
                    try await DriverHTTP.call(edge.baseURL + path, headers: headers).code == code
                }
                times.append(ContinuousClock.now - start)
            }
            return times
        }

        // Every instance has seen each credential (its caches hold them) before it ends.
        for edge in edges {
            #expect(try await DriverHTTP.call(edge.baseURL + "/user/profile", headers: token).status == 200)
            #expect(try await DriverHTTP.call(edge.baseURL + "/orders/1", headers: [("X-API-Key", key)]).status == 200)
            #expect(try await DriverHTTP.call(edge.baseURL + "/orders/1", headers: [("X-API-Key", partnerKey)]).status == 200)
        }

        var start = ContinuousClock.now
        #expect(try await DriverAPI.logout(setup.gateways[1], access: login.accessToken).status == 204)
        let logout = try await refusedEverywhere("/user/profile", token, code: "INVALID_TOKEN", since: start)

        start = ContinuousClock.now
        _ = try await PartnerControlsProcessTests.admin(setup.gateways[0], .POST, "/v1/keys/\(keyID)/revoke")
        let revocation = try await refusedEverywhere("/orders/1", [("X-API-Key", key)], code: "INVALID_API_KEY", since: start)

        start = ContinuousClock.now
        _ = try await PartnerControlsProcessTests.admin(setup.gateways[1], .POST, "/v1/partners/\(partnerID)/disable")
        let disable = try await refusedEverywhere("/orders/1", [("X-API-Key", partnerKey)], code: "FORBIDDEN", since: start)

        for (what, times) in [("logout", logout), ("key revocation", revocation), ("partner disable", disable)] {
            print("\(what) refused through nginx in front of each instance after \(times.map { "\($0)" }.joined(separator: ", "))")
            for (instance, time) in times.enumerated() {
                #expect(time < .seconds(1), "\(what) reached instance \(instance) through nginx after \(time)")
            }
        }
        // And they stay refused.
        for edge in edges {
            #expect(try await DriverHTTP.call(edge.baseURL + "/user/profile", headers: token).status == 401)
            #expect(try await DriverHTTP.call(edge.baseURL + "/orders/1", headers: [("X-API-Key", partnerKey)]).status == 403)
        }
    }
}
