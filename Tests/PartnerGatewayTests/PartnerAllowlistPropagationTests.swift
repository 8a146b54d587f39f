import Foundation
import Testing
import TestSupport

/// A key's network allowlist changed on one instance holds on both within a second; it takes
/// the whole process budget, since its assertion is a wall-clock bound.
@Suite("Partner keys: an allowlist reaches every instance", .timingSensitive)
struct PartnerAllowlistPropagationTests {
    @Test func anAllowlistReachesBothInstancesWithinOneSecondAndIsAudited() async throws {
        let setup = try await PartnerControlsProcessTests.start { "  - {name: orders, path_prefix: /orders, upstream: \($0.url), auth: api_key, scope: \"orders:read\"}" }
        defer { setup.upstream.stop() }
        let gateways = setup.gateways
        let (_, keyID, key) = try await PartnerControlsProcessTests.partnerAndKey(gateways[0])
        // Both instances hold the key in their caches, and take it from either address.
        for gateway in gateways {
            for source in ["127.0.0.1", "127.0.0.2"] {
                let reply = try await SourceAddressClient.get(port: gateway.port, path: "/orders/1", key: key, from: source)
                #expect(reply.status == 200, "\(source): \(reply.text)")
            }
        }

        let clock = ContinuousClock()
        let updated = try await PartnerControlsProcessTests.admin(gateways[1], .PATCH, "/v1/keys/\(keyID)", #"{"allowed_cidrs": ["127.0.0.1/32"]}"#)
        let done = clock.now
        #expect(updated["allowed_cidrs"] as? [String] == ["127.0.0.1/32"])
        #expect(updated.keys.contains("quota") && updated["quota"] is NSNull, "the key shows its quota, none: \(updated)")
        var times: [Duration] = []
        for gateway in gateways {
            try await eventually(timeout: .seconds(3), interval: .milliseconds(5)) {
                try await SourceAddressClient.get(port: gateway.port, path: "/orders/1", key: key, from: "127.0.0.2").status == 403
            }
            times.append(clock.now - done)
        }
        for time in times { #expect(time < .seconds(1), "the allowlist took \(time) to apply") }
        for gateway in gateways {
            let refused = try await SourceAddressClient.get(port: gateway.port, path: "/orders/1", key: key, from: "127.0.0.2")
            #expect(refused.status == 403)
            #expect(refused.text.contains(#""code":"FORBIDDEN""#), "\(refused.text)")
            #expect(refused.text.contains("address"), "the message says the address is not allowed: \(refused.text)")
            let allowed = try await SourceAddressClient.get(port: gateway.port, path: "/orders/1", key: key, from: "127.0.0.1")
            #expect(allowed.status == 200, "\(allowed.text)")
        }

        let audit = try await PartnerControlsProcessTests.admin(gateways[0], .GET, "/v1/audit?limit=1")
        let entry = try #require((audit["items"] as? [[String: Any]])?.first)
        #expect(entry["action"] as? String == "key.update")
        #expect(entry["target"] as? String == keyID)

        // A key's list narrows its partner's; a malformed range is refused in the error shape.
        let bad = try await PartnerControlsProcessTests.call(
            gateways[0].adminURL + "/v1/keys/\(keyID)", method: .PATCH,
            headers: [("Authorization", "Bearer \(GatewayProcess.adminToken)")], body: #"{"allowed_cidrs": ["10.0.0.0/33"]}"#
        )
        #expect(bad.status == 400)
        #expect(bad.code == "INVALID_REQUEST")
    }
}
