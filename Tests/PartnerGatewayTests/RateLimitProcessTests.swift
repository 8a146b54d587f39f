import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing
import TestSupport

/// Route rate limits on real gateway processes sharing one Redis.
@Suite("Rate limits through the gateway", .timingSensitive)
struct RateLimitProcessTests {
    static func yaml(
        redis: RedisServer, upstream: EchoUpstreamProcess, capacity: Int = 3, onStoreError: String = "deny", trusted: String = "[]",
        redisTimeout: String = GatewayProcess.redisTimeout
    ) -> String {
        """
        redis:
          url: \(redis.url)
          timeout: \(redisTimeout)
        otp:
          mode: uat
        trusted_proxies: \(trusted)
        rate_limits:
          on_store_error: \(onStoreError)
        routes:
          - name: limited
            path_prefix: /limited
            upstream: \(upstream.url)
            auth: none
            rate_limit: {per: ip, capacity: \(capacity), refill_per_second: 0.001}
        """
    }

    static func get(_ gateway: GatewayProcess, _ path: String, headers: [(String, String)] = []) async throws -> PartnerKeyProcessTests.Answer {
        try await PartnerKeyProcessTests.call(gateway.baseURL + path, headers: headers)
    }

    @Test func headersOnAllowedAndRefusedRequests() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, upstream: upstream))
        for remaining in [2, 1, 0] {
            let answer = try await Self.get(gateway, "/limited/x")
            #expect(answer.status == 200)
            #expect(answer.headers.first(name: "RateLimit-Limit") == "3")
            #expect(answer.headers.first(name: "RateLimit-Remaining") == String(remaining))
            #expect((Int(answer.headers.first(name: "RateLimit-Reset") ?? "") ?? 0) >= 1)
            #expect(answer.headers.first(name: "Retry-After") == nil)
        }
        let refused = try await Self.get(gateway, "/limited/x")
        #expect(refused.status == 429)
        #expect(refused.code == "RATE_LIMIT_EXCEEDED")
        #expect(refused.headers.first(name: "RateLimit-Remaining") == "0")
        #expect((Int(refused.headers.first(name: "Retry-After") ?? "") ?? 0) >= 1)
        #expect(refused.headers.first(name: "X-Request-Id") != nil)
        // A refused request spent nothing: still exactly zero left, not negative.
        let again = try await Self.get(gateway, "/limited/x")
        #expect(again.headers.first(name: "RateLimit-Remaining") == "0")
    }

    @Test func twoInstancesShareTheLimitAndItSurvivesARestart() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let yaml = Self.yaml(redis: redis, upstream: upstream, capacity: 4)
        let first = try await GatewayProcess(yaml: yaml)
        let second = try await GatewayProcess(yaml: yaml)
        var statuses: [UInt] = []
        for index in 0..<6 {
            statuses.append(try await Self.get(index % 2 == 0 ? first : second, "/limited").status)
        }
        #expect(statuses == [200, 200, 200, 200, 429, 429])

        // A restarted gateway finds the same (empty) bucket in Redis.
        await first.stop()
        let restarted = try await GatewayProcess(yaml: yaml)
        #expect(try await Self.get(restarted, "/limited").status == 429)
    }

    @Test func aSpoofedForwardedForFromAnUntrustedPeerChangesNothing() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let untrusting = try await GatewayProcess(yaml: Self.yaml(redis: redis, upstream: upstream, capacity: 2))
        var statuses: [UInt] = []
        for index in 0..<4 {
            statuses.append(try await Self.get(untrusting, "/limited", headers: [("X-Forwarded-For", "203.0.113.\(index)")]).status)
        }
        #expect(statuses == [200, 200, 429, 429], "each spoofed address must not get its own bucket")

        // From a trusted proxy (loopback here), the forwarded address is the client.
        let trusting = try await GatewayProcess(yaml: Self.yaml(redis: redis, upstream: upstream, capacity: 2, trusted: "[127.0.0.1/32]"))
        for index in 0..<4 {
            #expect(try await Self.get(trusting, "/limited", headers: [("X-Forwarded-For", "198.51.100.\(index)")]).status == 200)
        }
    }

    /// One keep-alive connection carrying two drivers in turn: the engine builds a
    /// connection's per-user check once, so it must notice when the caller changes. Each
    /// driver has their own bucket, counted exactly.
    @Test func aConnectionCarryingTwoUsersCountsEachInTheirOwnBucket() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, upstream: upstream) + """
              - name: per-user
                path_prefix: /per-user
                upstream: \(upstream.url)
                auth: bearer
                rate_limit: {per: user, capacity: 2, refill_per_second: 0.001}

            """)
        let first = try await DriverAPI.login(gateway, phone: "9876500081").accessToken
        let second = try await DriverAPI.login(gateway, phone: "9876500082").accessToken
        let callers = [first, second, first, first, second, second, first]
        let requests = callers.enumerated().map { index, token in
            "GET /per-user/\(index) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nX-Request-Id: user-\(index)\r\n\r\n"
        }
        let (answers, stillOpen) = try await RawClient.pipelined(port: gateway.port, requests: requests)
        try #require(answers.count == callers.count, "\(answers)")
        let statuses = answers.map { Int($0.dropFirst(9).prefix(3)) ?? 0 }
        #expect(statuses == [200, 200, 200, 429, 200, 429, 429])
        let remaining = answers.map { answer in
            answer.split(separator: "\r\n").first { $0.lowercased().hasPrefix("ratelimit-remaining:") }.map { $0.split(separator: " ").last.map(String.init) ?? "" }
        }
        #expect(remaining == ["1", "1", "0", "0", "0", "0", "0"])
        #expect(stillOpen)
    }

    @Test(arguments: [("allow", UInt(200)), ("deny", UInt(503))])
    func withRedisStoppedTheRoutePolicyDecides(policy: String, expected: UInt) async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, upstream: upstream, onStoreError: policy, redisTimeout: "250ms"))
        // A new gateway's first decision (a new Redis connection, the script not yet loaded) may
        // pass 250 ms on a busy machine and fail closed; the bucket holds three, so it is asked again.
        var warm = try await Self.get(gateway, "/limited")
        for _ in 0..<2 where warm.status == 503 { warm = try await Self.get(gateway, "/limited") }
        #expect(warm.status == 200)
        await redis.stop()
        let clock = ContinuousClock()
        let start = clock.now
        let answer = try await Self.get(gateway, "/limited")
        let took = clock.now - start
        #expect(answer.status == expected)
        if expected == 503 { #expect(answer.code == "SERVICE_UNAVAILABLE") }
        #expect(took < .milliseconds(600), "answered after \(took)")
    }
}

/// Per-address limits against IPv6 clients (addresses given through a trusted proxy's
/// `X-Forwarded-For`, since loopback tests have one source address).
@Suite("Per-address limits: one IPv6 network, one bucket", .timingSensitive)
struct IPv6BucketProcessTests {
    @Test func everyAddressOfASlash64SharesTheOTPTriggerBucket() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(
            redis: redis,
            rateLimits: "{otp_trigger_per_ip: {capacity: 2, refill_per_second: 0.001}}",
            extra: "trusted_proxies: [127.0.0.1/32]"
        ))
        func trigger(_ phone: String, from client: String) async throws -> DriverResponse {
            try await DriverAPI.post(gateway, "/auth/otp/trigger", body: DriverHTTP.json(["phone": phone]), headers: [("X-Forwarded-For", client)])
        }
        #expect(try await trigger("9000000101", from: "2001:db8:5:6::1").status == 200)
        #expect(try await trigger("9000000102", from: "2001:db8:5:6::2").status == 200)
        // A third address of the same /64: the network's bucket is empty.
        let refused = try await trigger("9000000103", from: "2001:db8:5:6:dead:beef:0:3")
        #expect(refused.status == 429, "\(refused)")
        #expect(refused.code == "RATE_LIMIT_EXCEEDED")
        // The next /64 is someone else.
        #expect(try await trigger("9000000104", from: "2001:db8:5:7::1").status == 200)
        _ = redis
    }
}
