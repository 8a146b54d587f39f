import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// `Idempotency-Key` on proxied routes, against real processes on loopback: two gateway
/// instances on one Redis and an upstream that counts its calls.
@Suite("Idempotency: exactly-once POSTs across instances", .serialized, .realProcesses)
struct IdempotencyProcessTests {
    /// One Redis, a ``CountingUpstream`` and `instances` gateways with the routes
    /// `/rides` (bearer, stored 24 h), `/open` (auth: none, stored 1 s) and `/strict` (bearer,
    /// key required).
    struct Stack {
        let redis: RedisServer
        let upstream: CountingUpstream
        let gateways: [GatewayProcess]

        init(instances: Int = 2) async throws {
            let redis = try await RedisServer()
            let upstream = try await CountingUpstream()
            let yaml = DriverYAML.make(redis: redis) + """
                routes:
                  - {name: rides, path_prefix: /rides, upstream: \(upstream.url), auth: bearer, idempotency: {ttl: 24h}}
                  - {name: open, path_prefix: /open, upstream: \(upstream.url), auth: none, idempotency: {ttl: 1s, max_stored_body: 1024}}
                  - {name: strict, path_prefix: /strict, upstream: \(upstream.url), auth: bearer, idempotency: {required: true}}

                """
            var gateways: [GatewayProcess] = []
            for _ in 0..<instances { gateways.append(try await GatewayProcess(yaml: yaml)) }
            self.redis = redis
            self.upstream = upstream
            self.gateways = gateways
        }

        func post(
            _ gateway: GatewayProcess, _ path: String, key: String?, token: String?, body: String, extra: [(String, String)] = []
        ) async throws -> DriverResponse {
            var headers = extra
            if let key { headers.append(("Idempotency-Key", key)) }
            if let token { headers.append(("Authorization", "Bearer \(token)")) }
            return try await DriverHTTP.call(gateway.baseURL + path, method: .POST, headers: headers, body: body)
        }

        /// Every `Idempotency-Key` record in Redis, as `GET` prints it.
        func records() async throws -> [String: String] {
            let names = try await redis.cli("--scan", "--pattern", "pg:idem:*").split(separator: "\n").map(String.init)
            var records: [String: String] = [:]
            for name in names where !name.isEmpty { records[name] = try await redis.cli("GET", name) }
            return records
        }

        /// Every key and value in Redis as text, read by type (never `DUMP`, which may
        /// compress a value and hide what it holds).
        func everything() async throws -> String {
            let names = try await redis.cli("--scan").split(separator: "\n").map(String.init)
            var text = ""
            for name in names where !name.isEmpty {
                text += name + "\n"
                switch try await redis.cli("TYPE", name) {
                case "string": text += try await redis.cli("GET", name)
                case "hash": text += try await redis.cli("HGETALL", name)
                case "set": text += try await redis.cli("SMEMBERS", name)
                case "zset": text += try await redis.cli("ZRANGE", name, "0", "-1")
                case "list": text += try await redis.cli("LRANGE", name, "0", "-1")
                case "stream": text += try await redis.cli("XRANGE", name, "-", "+")
                case "none": break  // gone since the scan (a spent OTP)
                case let other: text += "unread type \(other)"
                }
                text += "\n"
            }
            return text
        }

        /// Waits until every record holds a stored response (storing follows the response).
        func awaitStored(count: Int) async throws {
            try await eventually(timeout: .seconds(5)) {
                let records = try await records()
                return records.count == count && records.values.allSatisfy { $0.hasPrefix("D") }
            }
        }
    }

    @Test func theSamePostOnTwoInstancesReachesTheUpstreamOnce() async throws {
        let stack = try await Stack()
        defer { stack.upstream.stop() }
        let driver = try await DriverAPI.login(stack.gateways[0], phone: "9876500001").accessToken
        let body = #"{"ride": 42, "note": "PLAINTEXT-MARKER-5c1f"}"#
        let first = try await stack.post(stack.gateways[0], "/rides/42/accept", key: "Accept-Ride-42-Key", token: driver, body: body)
        #expect(first.status == 201, "\(first)")
        #expect(first.header("Idempotent-Replayed") == nil)
        #expect(first.header("X-Upstream-Key") == "Accept-Ride-42-Key", "the key is forwarded")
        try await stack.awaitStored(count: 1)

        let second = try await stack.post(stack.gateways[1], "/rides/42/accept", key: "Accept-Ride-42-Key", token: driver, body: body)
        #expect(second.status == 201, "\(second)")
        #expect(second.text == first.text)
        #expect(second.header("X-Call") == first.header("X-Call"))
        #expect(second.header("Idempotent-Replayed") == "true")
        #expect(second.header("X-Request-Id") != first.header("X-Request-Id"), "the replay carries its own request id")
        #expect(stack.upstream.calls == 1)

        // Stored encrypted: no record shows the body's marker, nor the key, in clear.
        let records = try await stack.records()
        #expect(records.count == 1)
        for (name, record) in records {
            #expect(record.hasPrefix("D"), "a stored answer")
            #expect(!record.contains("PLAINTEXT-MARKER"), "\(record)")
            #expect(!name.contains("Ride-42-Key") && !record.contains("Ride-42-Key"))
        }
        let everything = try await stack.everything()
        #expect(everything.contains("pg:idem:"), "the scan reads the records")
        #expect(!everything.contains("PLAINTEXT-MARKER"), "\(everything)")
        #expect(!everything.contains("Ride-42-Key"))
        #expect(!everything.contains("unread type"), "\(everything)")
        let metrics = try await DriverAPI.admin(stack.gateways[1], .GET, "/metrics")
        #expect(metrics.text.contains(#"gateway_idempotency_requests_total{route="rides",result="replayed"} 1"#), "\(metrics.text)")
    }

    @Test func twentyAtOnceAcrossBothInstancesMakeOneUpstreamCall() async throws {
        let stack = try await Stack()
        defer { stack.upstream.stop() }
        let driver = try await DriverAPI.login(stack.gateways[0], phone: "9876500002").accessToken
        // The upstream takes a while, so the others arrive while the first is in flight.
        let answers = try await withThrowingTaskGroup(of: DriverResponse.self) { group in
            for index in 0..<20 {
                group.addTask {
                    try await stack.post(
                        stack.gateways[index % 2], "/rides/7/accept", key: "burst-7", token: driver, body: #"{"ride": 7}"#,
                        extra: [("X-Test-Delay-Ms", "300")]
                    )
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(stack.upstream.calls == 1)
        let forwarded = answers.filter { $0.status == 201 && $0.header("Idempotent-Replayed") == nil }
        let replayed = answers.filter { $0.status == 201 && $0.header("Idempotent-Replayed") == "true" }
        let conflicts = answers.filter { $0.status == 409 }
        #expect(forwarded.count == 1, "\(answers)")
        #expect(forwarded.count + replayed.count + conflicts.count == 20, "\(answers)")
        for answer in replayed { #expect(answer.text == forwarded.first?.text) }
        for answer in conflicts {
            #expect(answer.code == "CONFLICT" && answer.isErrorShape, "\(answer)")
            #expect(answer.header("Retry-After") == "1")
        }
    }

    @Test func aReusedKeyAnotherCallerAnd5xxAndRequiredKeys() async throws {
        let stack = try await Stack(instances: 1)
        defer { stack.upstream.stop() }
        let gateway = stack.gateways[0]
        let alice = try await DriverAPI.login(gateway, phone: "9876500003").accessToken
        let bob = try await DriverAPI.login(gateway, phone: "9876500004").accessToken

        let first = try await stack.post(gateway, "/rides/1/accept", key: "k-1", token: alice, body: #"{"ride": 1}"#)
        #expect(first.status == 201)
        try await stack.awaitStored(count: 1)
        let reused = try await stack.post(gateway, "/rides/1/accept", key: "k-1", token: alice, body: #"{"ride": 2}"#)
        #expect(reused.status == 422, "\(reused)")
        #expect(reused.code == "IDEMPOTENCY_KEY_REUSED" && reused.isErrorShape)
        let otherPath = try await stack.post(gateway, "/rides/2/accept", key: "k-1", token: alice, body: #"{"ride": 1}"#)
        #expect(otherPath.status == 422, "\(otherPath)")
        #expect(stack.upstream.calls == 1)

        let bobs = try await stack.post(gateway, "/rides/1/accept", key: "k-1", token: bob, body: #"{"ride": 1}"#)
        #expect(bobs.status == 201 && bobs.header("Idempotent-Replayed") == nil, "another caller's key is another key: \(bobs)")
        #expect(stack.upstream.calls == 2)

        // A 5xx is not stored: the retry is forwarded.
        let failed = try await stack.post(gateway, "/rides/3/accept", key: "k-3", token: alice, body: "{}", extra: [("X-Test-Status", "500")])
        #expect(failed.status == 500)
        try await eventually { try await stack.records().count == 2 }
        let retried = try await stack.post(gateway, "/rides/3/accept", key: "k-3", token: alice, body: "{}")
        #expect(retried.status == 201 && retried.header("Idempotent-Replayed") == nil, "\(retried)")
        #expect(stack.upstream.calls == 4)

        // A response over the route's max_stored_body (1 KiB on /open) is forwarded, not stored.
        let large = String(repeating: "x", count: 2048)
        for _ in 0..<2 {
            let answer = try await stack.post(gateway, "/open/big", key: "big-1", token: nil, body: large)
            #expect(answer.status == 201 && answer.text.hasSuffix(large) && answer.header("Idempotent-Replayed") == nil, "\(answer.status)")
            // Freed after the response: alice's and bob's k-1 and alice's k-3 remain.
            try await eventually { try await stack.records().count == 3 }
        }
        #expect(stack.upstream.calls == 6)

        let missing = try await stack.post(gateway, "/strict/x", key: nil, token: alice, body: "{}")
        #expect(missing.status == 400 && missing.code == "INVALID_REQUEST", "\(missing)")
        let malformed = try await stack.post(gateway, "/strict/x", key: "two words", token: alice, body: "{}")
        #expect(malformed.status == 400 && malformed.code == "INVALID_REQUEST", "\(malformed)")
        let unkeyed = try await stack.post(gateway, "/rides/9", key: nil, token: alice, body: "{}")
        #expect(unkeyed.status == 201, "a route without required keys forwards unkeyed requests")
        #expect(stack.upstream.calls == 7)
    }

    @Test func afterTheTTLTheKeyIsForwardedAgain() async throws {
        let stack = try await Stack(instances: 1)
        defer { stack.upstream.stop() }
        let gateway = stack.gateways[0]
        let first = try await stack.post(gateway, "/open/pay", key: "pay-1", token: nil, body: "{}")
        #expect(first.status == 201)
        try await stack.awaitStored(count: 1)
        let replay = try await stack.post(gateway, "/open/pay", key: "pay-1", token: nil, body: "{}")
        #expect(replay.header("Idempotent-Replayed") == "true", "\(replay)")
        // Redis expires the record after the route's 1 s ttl.
        try await eventually(timeout: .seconds(5), interval: .milliseconds(50)) { try await stack.records().isEmpty }
        let again = try await stack.post(gateway, "/open/pay", key: "pay-1", token: nil, body: "{}")
        #expect(again.status == 201 && again.header("Idempotent-Replayed") == nil, "\(again)")
        #expect(stack.upstream.calls == 2)
    }

    @Test func withoutRedisAKeyedRequestIs503AndNeverForwarded() async throws {
        let stack = try await Stack(instances: 1)
        defer { stack.upstream.stop() }
        let gateway = stack.gateways[0]
        await stack.redis.stop()
        let answer = try await stack.post(gateway, "/open/pay", key: "pay-2", token: nil, body: "{}")
        #expect(answer.status == 503, "\(answer)")
        #expect(answer.code == "SERVICE_UNAVAILABLE" && answer.isErrorShape)
        #expect(stack.upstream.calls == 0)
        let unkeyed = try await stack.post(gateway, "/open/pay", key: nil, token: nil, body: "{}")
        #expect(unkeyed.status == 201, "an unkeyed request does not need Redis on an auth: none route")
    }

    /// Over HTTP/2 the same engine holds a keyed stream's body, then forwards, replays or refuses.
    @Test func overHTTP2AKeyedStreamIsForwardedOnceAndReplayed() async throws {
        let certificates = try await TestCertificates()
        let server = try await certificates.issue("gateway")
        let redis = try await RedisServer()
        let upstream = try await CountingUpstream()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: """
            tls: {cert_file: \(server.certFile), key_file: \(server.keyFile)}
            routes:
              - {name: open, path_prefix: /open, upstream: "\(upstream.url)", auth: none, idempotency: {ttl: 1h}}
            """))
        let probe = HTTP2Probe(port: gateway.port, caFile: certificates.caFile)
        let keyed: [[String]] = [["idempotency-key", "h2-key-1"], ["content-length", "9"]]
        let first = try await probe.exchange([.request("POST", "/open/pay", keyed, body: #"{"a": 1}"# + " ")])
        #expect(first.streams.first?.status == 201, "\(first)")
        try await eventually {
            let names = try await redis.cli("--scan", "--pattern", "pg:idem:*")
            guard !names.isEmpty else { return false }
            return try await redis.cli("GET", names).hasPrefix("D")
        }
        // On one connection: the same request replayed, then the key with another body refused.
        let again = try await probe.exchange([
            .request("POST", "/open/pay", keyed, body: #"{"a": 1}"# + " "),
            .request("POST", "/open/pay", keyed, body: #"{"a": 2}"# + " "),
        ])
        #expect(again.streams.map(\.status) == [201, 422], "\(again)")
        #expect(again.streams.first?.body == #"call 1: {"a": 1} "#, "\(again)")
        #expect(again.streams.last?.errorCode == "IDEMPOTENCY_KEY_REUSED", "\(again)")
        #expect(upstream.calls == 1)
    }
}
