import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing
import TestSupport

/// Network allowlists, quotas and usage of partner keys, on two gateway instances sharing one
/// Redis, with an echo upstream behind an `api_key` route.
@Suite("Partner keys: allowlists, quotas, usage", .serialized, .realProcesses)
struct PartnerControlsProcessTests {
    struct Setup {
        let redis: RedisServer
        let upstream: EchoUpstreamProcess
        let gateways: [GatewayProcess]
    }

    static func start(instances: Int = 2, usage: String = "", routes: (EchoUpstreamProcess) -> String) async throws -> Setup {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        let yaml = "redis:\n  url: \(redis.url)\n  timeout: \(GatewayProcess.redisTimeout)\notp:\n  mode: uat\n" + usage + "routes:\n" + routes(upstream) + "\n"
        var gateways: [GatewayProcess] = []
        for _ in 0..<instances { gateways.append(try await GatewayProcess(yaml: yaml)) }
        return Setup(redis: redis, upstream: upstream, gateways: gateways)
    }

    /// The answers of `PartnerKeyProcessTests.call`, with what these tests compare.
    typealias Answer = PartnerKeyProcessTests.Answer

    struct Summary: Sendable {
        let status: UInt
        let code: String?
        let retryAfter: String?
        let limit: String?
        let remaining: String?
    }

    static func call(_ url: String, method: HTTPMethod = .GET, headers: [(String, String)] = [], body: String? = nil) async throws -> Answer {
        try await PartnerKeyProcessTests.call(url, method: method, headers: headers, body: body)
    }

    static func admin(_ gateway: GatewayProcess, _ method: HTTPMethod, _ path: String, _ body: String? = nil) async throws -> [String: Any] {
        try await PartnerKeyProcessTests.admin(gateway, method, path, body)
    }

    static func proxied(_ gateway: GatewayProcess, _ path: String, key: String) async throws -> Answer {
        try await call(gateway.baseURL + path, headers: [("X-API-Key", key)])
    }

    /// A partner (with `scopes`) and one key of it holding `keyScopes`: (partner id, key id, key).
    static func partnerAndKey(_ gateway: GatewayProcess, scopes: [String] = ["orders:read"], keyScopes: [String]? = nil) async throws -> (String, String, String) {
        let scopeList = scopes.map { "\"\($0)\"" }.joined(separator: ",")
        let partner = try await admin(gateway, .POST, "/v1/partners", #"{"name": "NammaYatri", "scopes": [\#(scopeList)], "rate": 1000, "burst": 1000}"#)
        let partnerID = try #require(partner["partner_id"] as? String)
        let keyBody = keyScopes.map { #"{"scopes": [\#($0.map { "\"\($0)\"" }.joined(separator: ","))]}"# }
        let created = try await admin(gateway, .POST, "/v1/partners/\(partnerID)/keys", keyBody)
        return (partnerID, try #require(created["key_id"] as? String), try #require(created["key"] as? String))
    }

    // MARK: Quotas

    @Test func aDailyQuotaIsExactAcrossInstancesAndARaiseAppliesAtOnce() async throws {
        let setup = try await Self.start(usage: "usage:\n  time_zone: Asia/Kolkata\n") {
            "  - {name: orders, path_prefix: /orders, upstream: \($0.url), auth: api_key, scope: \"orders:read\"}"
        }
        defer { setup.upstream.stop() }
        let gateways = setup.gateways
        let (_, keyID, key) = try await Self.partnerAndKey(gateways[0])
        _ = try await Self.admin(gateways[0], .PATCH, "/v1/keys/\(keyID)", #"{"quota": {"limit": 100, "period": "day"}}"#)

        /// `clients` callers at once, alternating between the instances, `each` calls apiece.
        func burst(clients: Int, each: Int) async throws -> [Summary] {
            try await withThrowingTaskGroup(of: [Summary].self) { group in
                for client in 0..<clients {
                    group.addTask {
                        var answers: [Summary] = []
                        for _ in 0..<each { answers.append(try await Self.proxied(gateways[client % gateways.count], "/orders/1", key: key).summary) }
                        return answers
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
        }

        let answers = try await burst(clients: 50, each: 4)
        #expect(answers.filter { $0.status == 200 }.count == 100)
        let refused = answers.filter { $0.status != 200 }
        #expect(refused.count == 100)
        #expect(refused.allSatisfy { $0.status == 429 && $0.code == "QUOTA_EXCEEDED" }, "\(refused.first.map { "\($0.status) \($0.code ?? "-")" } ?? "")")
        // Retry-After: the next midnight in Asia/Kolkata.
        var kolkata = Calendar(identifier: .gregorian)
        kolkata.timeZone = TimeZone(identifier: "Asia/Kolkata")!
        let midnight = kolkata.nextDate(after: Date(), matching: DateComponents(hour: 0, minute: 0, second: 0), matchingPolicy: .strict)!
        let untilMidnight = midnight.timeIntervalSinceNow
        for answer in refused {
            let retryAfter = try #require(answer.retryAfter.flatMap(Double.init))
            #expect(abs(retryAfter - untilMidnight) < 30, "Retry-After \(retryAfter) s, next Kolkata midnight in \(untilMidnight) s")
            #expect(answer.limit == "100")
            #expect(answer.remaining == "0")
        }

        // Raised to 150: exactly 50 more, on whichever instance they land.
        _ = try await Self.admin(gateways[1], .PATCH, "/v1/keys/\(keyID)", #"{"quota": {"limit": 150, "period": "day"}}"#)
        var admittedWhileWaiting = 0
        let clock = ContinuousClock()
        for gateway in gateways {
            // A refused call spends nothing, so asking until the new limit shows costs one call.
            let deadline = clock.now + .seconds(3)
            while true {
                let answer = try await Self.proxied(gateway, "/orders/1", key: key)
                if answer.status == 200 { admittedWhileWaiting += 1 }
                if answer.headers.first(name: "RateLimit-Limit") == "150" { break }
                try #require(clock.now < deadline, "the raised quota did not reach \(gateway.baseURL) within 3 s")
            }
        }
        let more = try await burst(clients: 50, each: 2)
        #expect(admittedWhileWaiting + more.filter { $0.status == 200 }.count == 50)
        #expect(more.filter { $0.status != 200 }.allSatisfy { $0.code == "QUOTA_EXCEEDED" })
    }

    // MARK: Usage

    @Test func gatewayctlPrintsTheUsageOfAKnownMixOfCalls() async throws {
        let setup = try await Self.start(instances: 1) { upstream in
            """
              - {name: orders, path_prefix: /orders, upstream: \(upstream.url), auth: api_key, scope: "orders:read"}
              - {name: refunds, path_prefix: /refunds, upstream: \(upstream.url), auth: api_key, scope: "refunds:write"}
              - {name: limited, path_prefix: /limited, upstream: \(upstream.url), auth: api_key, scope: "orders:read", rate_limit: {per: partner, capacity: 3, refill_per_second: 0.0001}}
            """
        }
        defer { setup.upstream.stop() }
        let gateway = setup.gateways[0]
        let (partnerID, keyID, key) = try await Self.partnerAndKey(gateway, scopes: ["orders:read", "refunds:write"], keyScopes: ["orders:read"])

        var statuses: [UInt] = []
        for path in ["/orders/1", "/orders/2", "/orders/3?status=500", "/refunds/1", "/refunds/2"] + Array(repeating: "/limited/1", count: 5) {
            statuses.append(try await Self.proxied(gateway, path, key: key).status)
        }
        #expect(statuses == [200, 200, 500, 403, 403, 200, 200, 200, 429, 429])
        // The access line of an admitted call names the key by its id, never the key.
        try await eventually(timeout: .seconds(5), interval: .milliseconds(50)) { gateway.log.contains(#""key_id":"\#(keyID)""#) }
        #expect(!gateway.log.contains(key))

        let calendar = Calendar(identifier: .gregorian)
        let format = Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC")!).year().month().day()
        let from = calendar.date(byAdding: .day, value: -1, to: Date())!.formatted(format)
        let to = calendar.date(byAdding: .day, value: 1, to: Date())!.formatted(format)
        let expected = ["allowed": 6, "refused_auth": 2, "refused_limit": 2, "refused_quota": 0, "upstream_2xx": 5, "upstream_4xx": 0, "upstream_5xx": 1]

        func ctl(_ arguments: [String]) async throws -> ShortCommandResult {
            var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("GATEWAY_") }
            environment["GATEWAY_ADMIN_URL"] = gateway.adminURL
            environment["GATEWAY_ADMIN_TOKEN"] = GatewayProcess.adminToken
            environment["XDG_CONFIG_HOME"] = FileManager.default.temporaryDirectory.appendingPathComponent("gatewayctl-tests-no-config").path
            return try await ShortCommand.run(BuiltProduct.path("gatewayctl"), arguments, environment: environment)
        }
        /// The counts summed over the days of a JSON report.
        func totals(_ stdout: String) throws -> [String: Int] {
            let report = try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
            let days = try #require(report["days"] as? [[String: Any]])
            #expect(days.count == 3)
            var sums: [String: Int] = [:]
            for day in days { for name in expected.keys { sums[name, default: 0] += day[name] as? Int ?? 0 } }
            return sums
        }

        // Counts reach Redis within a second of the calls (the flush); ask until they are there.
        for owner in [["--key", keyID], ["--partner", partnerID]] {
            try await eventually(timeout: .seconds(5), interval: .milliseconds(50)) {
                let result = try await ctl(["usage"] + owner + ["--from", from, "--to", to, "-o", "json"])
                return result.status == 0 && (try? totals(result.stdout)) == expected
            }
        }
        let json = try await ctl(["usage", "--key", keyID, "--from", from, "--to", to, "-o", "json"])
        #expect(try totals(json.stdout) == expected)
        #expect(json.stdout.contains(#""key_id""#) && json.stdout.contains(#""time_zone""#))

        let table = try await ctl(["usage", "--key", keyID, "--from", from, "--to", to])
        #expect(table.status == 0, "\(table.stderr)")
        let lines = table.stdout.split(separator: "\n")
        #expect(lines.first?.hasPrefix("DATE") == true)
        let tableSums = lines.dropFirst().reduce(into: [Int](repeating: 0, count: 7)) { sums, line in
            let cells = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().compactMap { Int($0) }
            for (index, value) in cells.enumerated() where index < 7 { sums[index] += value }
        }
        #expect(tableSums == [6, 2, 2, 0, 5, 0, 1], "\(table.stdout)")

        let csv = try await ctl(["usage", "--key", keyID, "--from", from, "--to", to, "-o", "csv"])
        #expect(csv.status == 0, "\(csv.stderr)")
        let script = """
            import csv, json, sys
            rows = list(csv.DictReader(sys.stdin))
            fields = ["allowed", "refused_auth", "refused_limit", "refused_quota", "upstream_2xx", "upstream_4xx", "upstream_5xx"]
            print(json.dumps({"rows": len(rows), "totals": {f: sum(int(r[f]) for r in rows) for f in fields}}))
            """
        let parsed = try await ShortCommand.run("/usr/bin/python3", ["-c", script], standardInput: Data(csv.stdout.utf8))
        #expect(parsed.status == 0, "\(parsed.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(parsed.stdout.utf8)) as? [String: Any])
        #expect(object["rows"] as? Int == 3)
        #expect(object["totals"] as? [String: Int] == expected)

        // Dates are checked and the range bounded, in the error shape.
        for query in ["from=2026-02-30&to=2026-03-01", "from=2026-03-02&to=2026-03-01", "from=2020-01-01&to=2026-01-01", "from=0001-01-01&to=9999-12-31", "to=2026-01-01"] {
            let answer = try await Self.call(
                gateway.adminURL + "/v1/keys/\(keyID)/usage?\(query)", headers: [("Authorization", "Bearer \(GatewayProcess.adminToken)")]
            )
            #expect(answer.status == 400, "\(query)")
            #expect(answer.code == "INVALID_REQUEST", "\(query)")
        }
    }
}

extension PartnerKeyProcessTests.Answer {
    var message: String? { (body["error"] as? [String: Any])?["message"] as? String }

    /// What the quota test compares, without the body (tasks hand these over).
    var summary: PartnerControlsProcessTests.Summary {
        PartnerControlsProcessTests.Summary(
            status: status, code: code, retryAfter: headers.first(name: "Retry-After"),
            limit: headers.first(name: "RateLimit-Limit"), remaining: headers.first(name: "RateLimit-Remaining")
        )
    }
}
