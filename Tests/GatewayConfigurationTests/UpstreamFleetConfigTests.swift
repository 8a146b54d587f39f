@testable import GatewayConfiguration
import TestSupport
import Testing

/// `upstream` as one URL or a list of targets, and the fleet's settings (docs/configuration.md,
/// "Upstream fleets").
@Suite struct UpstreamFleetConfigTests {
    private static func route(_ fields: String, auth: String = "bearer") -> String {
        "otp: {mode: uat}\nroutes:\n  - {name: a, path_prefix: /a, auth: \(auth), \(fields)}\n"
    }

    @Test func oneURLIsAFleetOfOneWithTheDefaults() throws {
        let route = try #require(try TestConfig.load(Self.route("upstream: http://127.0.0.1:9001/api")).routes.first)
        #expect(route.targets == [.init(url: "http://127.0.0.1:9001/api", weight: 1)])
        #expect(route.upstream == "http://127.0.0.1:9001/api")
        #expect(route.balance == .roundRobin)
        #expect(route.healthCheck == nil)
        #expect(route.outlier.consecutiveFailures == 5)
        #expect(route.outlier.ejectionTime.duration == .seconds(30))
        #expect(route.outlier.maxEjectedPercent == 50)
        #expect(route.retries.attempts == 1)
    }

    @Test func listOfTargetsWithEverySetting() throws {
        let yaml = """
            otp: {mode: uat}
            routes:
              - name: fleet
                path_prefix: /f
                auth: bearer
                upstream:
                  - http://10.0.0.1:9001
                  - {url: http://10.0.0.2:9001, weight: 2}
                balance: hash_user
                health_check: {path: /healthz, interval: 2s, timeout: 500ms, healthy: 3, unhealthy: 1}
                outlier: {consecutive_failures: 3, ejection_time: 10s, max_ejected_percent: 34}
                retries: {attempts: 2}

            """
        let route = try #require(try TestConfig.load(yaml).routes.first)
        #expect(route.targets == [.init(url: "http://10.0.0.1:9001"), .init(url: "http://10.0.0.2:9001", weight: 2)])
        #expect(route.balance == .hashUser)
        let check = try #require(route.healthCheck)
        #expect(check.path == "/healthz" && check.interval.duration == .seconds(2) && check.timeout.duration == .milliseconds(500))
        #expect(check.healthy == 3 && check.unhealthy == 1)
        #expect(route.outlier.consecutiveFailures == 3 && route.outlier.ejectionTime.duration == .seconds(10))
        #expect(route.outlier.maxEjectedPercent == 34)
        #expect(route.retries.attempts == 2)
    }

    @Test(arguments: [
        ("upstream: []", "routes[0].upstream", "at least one target"),
        ("upstream: {url: http://x}", "routes[0].upstream", "a URL or a list of targets"),
        ("upstream: [http://x:1, ftp://y]", "routes[0].upstream[1]", "http://"),
        ("upstream: [http://x:1, https://y:1]", "routes[0].upstream[1]", "scheme of the first target"),
        ("upstream: [http://x:1/api, http://y:1/v2]", "routes[0].upstream[1]", "path of the first target"),
        ("upstream: [http://x:1, http://X:1]", "routes[0].upstream[1]", "same host:port"),
        ("upstream: [http://x:1, {url: http://y:1, weight: 0}]", "routes[0].upstream[1].weight", "between 1 and 100"),
        ("upstream: [http://x:1, {url: http://y:1, weight: 101}]", "routes[0].upstream[1].weight", "between 1 and 100"),
        ("upstream: [http://x:1, {url: http://y:1, wieght: 2}]", "routes[0].upstream[1].wieght", "unknown key"),
        ("upstream: [http://x:1, {weight: 2}]", "routes[0].upstream[1].url", "is required"),
        ("upstream: [http://x:1, \"http://u:p@y:1\"]", "routes[0].upstream[1]", "credentials"),
        ("upstream: http://x, balance: random", "routes[0].balance", "round_robin, least_request, hash_user"),
        ("upstream: http://x, health_check: {path: healthz}", "routes[0].health_check.path", "start with /"),
        ("upstream: http://x, health_check: {interval: 1s, timeout: 2s}", "routes[0].health_check.timeout", "at most the interval"),
        ("upstream: http://x, health_check: {interval: 10ms}", "routes[0].health_check.interval", "at least 100ms"),
        ("upstream: http://x, health_check: {healthy: 0}", "routes[0].health_check.healthy", "between 1 and 10"),
        ("upstream: http://x, health_check: {unhealthy: 11}", "routes[0].health_check.unhealthy", "between 1 and 10"),
        ("upstream: http://x, health_check: {method: HEAD}", "routes[0].health_check.method", "unknown key"),
        ("upstream: http://x, outlier: {consecutive_failures: 0}", "routes[0].outlier.consecutive_failures", "between 1 and 1000"),
        ("upstream: http://x, outlier: {ejection_time: soon}", "routes[0].outlier.ejection_time", "is not a duration"),
        ("upstream: http://x, outlier: {max_ejected_percent: 101}", "routes[0].outlier.max_ejected_percent", "between 0 and 100"),
        ("upstream: http://x, outlier: {interval: 10s}", "routes[0].outlier.interval", "unknown key"),
        ("upstream: http://x, retries: {attempts: 6}", "routes[0].retries.attempts", "between 0 and 5"),
        ("upstream: http://x, retries: {per_try_timeout: 1s}", "routes[0].retries.per_try_timeout", "unknown key"),
    ])
    func badFleetsNameTheirKey(fields: String, key: String, problem: String) throws {
        let error = try #require(throws: ConfigError.self) { try TestConfig.load(Self.route(fields)) }
        #expect(error.key == key)
        #expect(error.description.contains(problem), "\(error)")
    }

    /// A caller to hash exists only on authenticated routes.
    @Test func hashUserNeedsAnAuthenticatedRoute() throws {
        let error = try #require(throws: ConfigError.self) { try TestConfig.load(Self.route("upstream: http://x, balance: hash_user", auth: "none")) }
        #expect(error.key == "routes[0].balance")
        _ = try TestConfig.load(Self.route("upstream: http://x, balance: hash_user", auth: "api_key"))
    }
}
