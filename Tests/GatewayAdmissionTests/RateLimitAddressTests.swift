import GatewayAdmission
import GatewayConfiguration
import Testing
import TestSupport

/// Whom a per-address bucket counts (`RateLimitPolicies.addressSubject`).
@Suite("Per-address buckets: IPv4 by address, IPv6 by network")
struct RateLimitAddressTests {
    private static func policies(prefix: Int? = nil) throws -> RateLimitPolicies {
        let extra = prefix.map { "rate_limits:\n  ipv6_prefix_length: \($0)\n" } ?? ""
        return RateLimitPolicies(limits: try TestConfig.load(TestConfig.yaml(redisURL: "redis://127.0.0.1:1/0", extra: extra)).rateLimits)
    }

    @Test(arguments: [
        ("203.0.113.9", "203.0.113.9"),
        ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),
        ("2001:DB8:1:2:a:b:c:d", "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
        ("::1", "::/64"),
        ("::ffff:10.0.0.1", "10.0.0.1"),
        ("unknown", "unknown"),
    ])
    func defaultPrefix(address: String, subject: String) throws {
        #expect(try Self.policies().addressSubject(address) == subject)
    }

    @Test func everyAddressOfOneNetworkSharesOneBucket() throws {
        let policies = try Self.policies()
        let keys = Set(["2001:db8:a:b::1", "2001:db8:a:b::2", "2001:db8:a:b:1234:5678:9abc:def0"].map { policies.apiKeyFailures(clientIP: $0).key })
        #expect(keys.count == 1, "\(keys)")
        #expect(policies.otpTrigger(tag: "t", clientIP: "2001:db8:a:b::9")[1].key == "otp-ip:2001:db8:a:b::/64")
    }

    /// Per partner on a bearer route, a driver's own login (no partner) is limited as its user.
    @Test func aPartnerLimitCountsATokenOfNoPartnerAsItsUser() throws {
        let policies = try Self.policies()
        var limit = GatewayConfig.Route.RateLimit()
        limit.per = .partner
        limit.capacity = 2
        limit.refillPerSecond = 1
        let route = AdmissionRoute(name: "rides", auth: .bearer, scope: "", rateLimit: limit)
        #expect(policies.route(route, userID: "usr_1", partnerID: "ptr_1", clientIP: "192.0.2.1")?.key == "route:rides:partner:ptr_1")
        #expect(policies.route(route, userID: "usr_1", partnerID: nil, clientIP: "192.0.2.1")?.key == "route:rides:user:usr_1")
    }

    @Test(arguments: [(48, "2001:db8:1::/48"), (128, "2001:db8:1:2::1/128"), (56, "2001:db8:1::/56")])
    func configuredPrefix(prefix: Int, subject: String) throws {
        #expect(try Self.policies(prefix: prefix).addressSubject("2001:db8:1:2::1") == subject)
    }
}
