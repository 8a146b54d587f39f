import Foundation
import Testing
import TestSupport

/// `/metrics` of a running gateway, read by prometheus_client's parser (the exposition format
/// Prometheus scrapes): every family has HELP and TYPE, the route label follows one scheme,
/// and every metric the dashboard and the alert rules in `ops/` name is exported.
@Suite("Metrics exposition", .realProcesses)
struct MetricsExpositionTests {
    private static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func everyFamilyIsDescribedAndEveryNamedMetricExists() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        let gateway = try await GatewayProcess(yaml: """
        redis: {url: \(redis.url), timeout: \(GatewayProcess.redisTimeout)}
        otp: {mode: uat}
        routes:
          - {name: echo, path_prefix: /echo, upstream: \(upstream.url), auth: none}
          - {name: user, path_prefix: /user, upstream: \(upstream.url), auth: bearer}
          - {name: partner, path_prefix: /partner-api, upstream: \(upstream.url), auth: api_key}
          - name: limited
            path_prefix: /limited
            upstream: \(upstream.url)
            auth: none
            rate_limit: {per: ip, capacity: 1, refill_per_second: 0.001}
          - {name: dead, path_prefix: /dead, upstream: http://127.0.0.1:\(LoopbackPort.free()), auth: none}
          - name: fleet
            path_prefix: /fleet
            upstream: [http://127.0.0.1:\(LoopbackPort.free()), \(upstream.url)]
            auth: none
            outlier: {consecutive_failures: 1}
        """)
        // Traffic that makes every kind of series: proxied, refused, limited, failed, unmatched.
        // A fleet's dead first target: a retry, then its ejection.
        for path in ["/echo/a", "/nowhere", "/limited/1", "/limited/2", "/dead/1", "/fleet/1", "/fleet/2", "/fleet/3"] {
            _ = try await DriverHTTP.call(gateway.baseURL + path)
        }
        _ = try await DriverHTTP.call(gateway.baseURL + "/user/1", headers: [("Authorization", "Bearer not.a.token")])
        _ = try await DriverHTTP.call(gateway.baseURL + "/partner-api/1", headers: [("X-API-Key", "pgk_live_wrong")])
        let pair = try await DriverAPI.login(gateway, phone: "9876543210")
        _ = try await DriverHTTP.call(gateway.baseURL + "/user/1", headers: [("Authorization", "Bearer \(pair.accessToken)")])

        let metrics = try await DriverHTTP.call(gateway.adminURL + "/metrics")
        try #require(metrics.status == 200)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pg-metrics-\(UUID().uuidString).txt").path
        try metrics.text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }

        let check = try await ShortCommand.run("/usr/bin/env", [
            "python3", Self.repository.appendingPathComponent("ops/check-metrics.py").path, path,
            Self.repository.appendingPathComponent("ops/grafana-dashboard.json").path,
            Self.repository.appendingPathComponent("ops/prometheus-alerts.yaml").path,
        ])
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any],
            "ops/check-metrics.py needs python3 with prometheus_client and yaml: \(check.stderr)"
        )
        #expect(check.status == 0, "\(report["problems"] ?? check.stderr)")
        let families = try #require(report["families"] as? [String: [String: Any]])
        #expect(families.count >= 28, "\(families.keys.sorted())")
        for required in ["process_cpu_seconds", "process_resident_memory_bytes", "process_open_fds", "process_start_time_seconds",
                         "gateway_build_info", "gateway_http_requests_in_flight", "gateway_redis_command_duration_seconds",
                         "gateway_cache_lookups"] {
            #expect(families[required] != nil, "\(required) is not exported")
        }
        // One route-label scheme: route names, endpoint paths, `unmatched`.
        #expect(metrics.text.contains(#"gateway_http_requests_total{listener="public",route="unmatched",method="GET",status="404"}"#))
        #expect(metrics.text.contains(#"route="echo""#))
        #expect(!metrics.text.contains(#"route="route:"#))
        #expect(!metrics.text.contains(#"route="NotFound""#))
        #expect(metrics.text.contains(#"gateway_cache_lookups_total{cache="token",result="miss"}"#))
    }

    /// The rules in `ops/` are valid Prometheus rules (promtool ships in Debian's `prometheus`).
    @Test func alertRulesPassPromtool() async throws {
        let result = try await ShortCommand.run("/usr/bin/env", ["promtool", "check", "rules", Self.repository.appendingPathComponent("ops/prometheus-alerts.yaml").path])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("SUCCESS"), "\(result.stdout)")
    }
}
