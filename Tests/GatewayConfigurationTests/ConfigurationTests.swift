import Foundation
@testable import GatewayConfiguration
import GatewayPrimitives
import Testing
import TestSupport

@Suite struct ConfigurationTests {
    @Test func emptyFileMeansDefaults() throws {
        let config = try TestConfig.load("# nothing\n", environment: TestConfig.environment.merging(["GATEWAY_OTP_MODE": "uat"]) { $1 })
        #expect(config.listen == ListenAddress(host: "0.0.0.0", port: 8080))
        #expect(config.admin.listen == ListenAddress(host: "127.0.0.1", port: 9090))
        #expect(config.redis.poolSize == 16)
        #expect(config.redis.timeout.duration == .milliseconds(250))
        #expect(config.secrets.redis.flushInterval == .zero)
        #expect(config.tokens.accessTTL.duration == .seconds(86_400))
        #expect(config.tokens.refreshTTL.duration == .seconds(30 * 86_400))
        #expect(config.tokens.refreshReuseInterval.duration == .seconds(10))
        #expect(config.otp.maxAttempts == 5)
        #expect(config.otp.maxFailuresPerDay == 20)
        #expect(config.rateLimits.otpTriggerPerPhone == .init(capacity: 3, refillPerSecond: 0.005))
        #expect(config.rateLimits.onStoreError == .deny)
        #expect(config.maxBodyBytes == 1_048_576)
        #expect(config.server.eventLoops == nil)
        #expect(!config.server.reusePort)
        #expect(!config.tracing.isEnabled)
        #expect(config.tracing.samplingRatio == 1.0)
        #expect(config.tracing.serviceName == "partner-gateway")
        #expect(!config.portal.enabled && config.portal.delivery == .webhook && config.portal.origin.isEmpty)
        #expect(config.portal.sessionIdle.duration == .seconds(1800) && config.portal.sessionMax.duration == .seconds(12 * 3600))
        #expect(config.portal.codeWebhookSecretEnv == "GATEWAY_PORTAL_WEBHOOK_SECRET")
        #expect(config.authz.listen == nil)
    }

    /// The authorization listener, and a route only edges ask about (docs/edges.md).
    @Test func authorizationListenerAndRoutesWithoutUpstream() throws {
        let config = try TestConfig.load("""
        otp: {mode: uat}
        authz: {listen: 10.0.0.10:9191}
        routes:
          - {name: edge, path_prefix: /edge, upstream: none, auth: api_key, scope: "orders:read", rate_limit: {per: partner, capacity: 5, refill_per_second: 1}}
          - {name: proxied, path_prefix: /proxied, upstream: http://127.0.0.1:9001, auth: bearer}
        """)
        #expect(config.authz.listen == ListenAddress(host: "10.0.0.10", port: 9191))
        #expect(config.authz.tls == nil)
        #expect(config.routes[0].targets.isEmpty && !config.routes[0].hasUpstream)
        #expect(config.routes[0].rateLimit?.capacity == 5)
        #expect(config.routes[1].hasUpstream)
        var environment = TestConfig.environment
        environment["GATEWAY_AUTHZ_LISTEN"] = "127.0.0.1:19191"
        let overridden = try TestConfig.load("otp: {mode: uat}\n", environment: environment)
        #expect(overridden.authz.listen == ListenAddress(host: "127.0.0.1", port: 19191))
    }

    /// Spans go to the endpoint's `/v1/traces`, with or without a trailing slash.
    @Test func tracingEndpointGetsTheTracesPath() throws {
        for endpoint in ["http://127.0.0.1:4318", "http://127.0.0.1:4318/"] {
            let config = try TestConfig.load("otp: {mode: uat}\ntracing: {otlp_endpoint: \"\(endpoint)\", sampling_ratio: 0.25}\n")
            #expect(config.tracing.isEnabled)
            #expect(config.tracing.tracesURL == "http://127.0.0.1:4318/v1/traces")
            #expect(config.tracing.samplingRatio == 0.25)
        }
    }

    @Test func idempotencyDefaultsAndValues() throws {
        let config = try TestConfig.load("""
            otp: {mode: uat}
            routes:
              - {name: a, path_prefix: /a, upstream: http://x, auth: none, idempotency: {}}
              - {name: b, path_prefix: /b, upstream: http://x, auth: bearer, idempotency: {ttl: 1h, required: true, max_stored_body: 2048}}
              - {name: c, path_prefix: /c, upstream: http://x, auth: none}

            """)
        #expect(config.routes[0].idempotency == GatewayConfig.Route.Idempotency())
        #expect(config.routes[0].idempotency?.ttl.duration == .seconds(86_400))
        #expect(config.routes[0].idempotency?.required == false)
        #expect(config.routes[0].idempotency?.maxStoredBody == 65_536)
        #expect(config.routes[1].idempotency?.ttl.duration == .seconds(3600))
        #expect(config.routes[1].idempotency?.required == true)
        #expect(config.routes[1].idempotency?.maxStoredBody == 2048)
        #expect(config.routes[2].idempotency == nil)
    }

    /// `request_headers`: `add` kept in the file's order, every value read as text; none by default.
    @Test func requestHeadersKeepTheFilesOrder() throws {
        let config = try TestConfig.load("""
            otp: {mode: uat}
            routes:
              - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {X-Tenant: blue, X-Env: staging, X-Shard: 7, A-Last: ""}, remove: [X-Debug, Cookie]}}
              - {name: b, path_prefix: /b, upstream: http://x, auth: none, request_headers: {}}
              - {name: c, path_prefix: /c, upstream: http://x, auth: none}

            """)
        typealias Field = GatewayConfig.Route.RequestHeaders.Field
        #expect(config.routes[0].requestHeaders.add == [
            Field(name: "X-Tenant", value: "blue"), Field(name: "X-Env", value: "staging"), Field(name: "X-Shard", value: "7"), Field(name: "A-Last", value: ""),
        ])
        #expect(config.routes[0].requestHeaders.remove == ["X-Debug", "Cookie"])
        #expect(config.routes[1].requestHeaders == GatewayConfig.Route.RequestHeaders())
        #expect(config.routes[2].requestHeaders.add.isEmpty && config.routes[2].requestHeaders.remove.isEmpty)
    }

    @Test func shippedDevelopmentConfigLoads() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../config/gateway.dev.yaml").path
        let config = try GatewayConfig.load(path: path, environment: TestConfig.environment)
        #expect(config.otp.mode == .uat)
        #expect(config.routes.map(\.name) == ["user-profile", "rides", "echo"])
        #expect(config.routes[1].auth == .apiKey)
        #expect(config.portal.enabled && config.portal.delivery == .uat && config.portal.origin == "http://localhost:8080")
        #expect(config.routes[0].rateLimit?.per == .user)
        // Routes written before WebSockets keep their meaning: no upgrades, a 5m stream idle timeout.
        #expect(!config.routes[0].websocket && config.routes[0].streamIdleTimeout.duration == .seconds(300))
        #expect(config.secrets.signingKeys.map(\.kid) == ["dev1"])
    }

    @Test func environmentOverridesTheFile() throws {
        var environment = TestConfig.environment
        environment["GATEWAY_LISTEN"] = "127.0.0.1:18080"
        environment["GATEWAY_ADMIN_LISTEN"] = "[::1]:19090"
        environment["GATEWAY_REDIS_URL"] = "redis://10.0.0.5:6380/2"
        environment["GATEWAY_OTP_MODE"] = "uat"
        let config = try TestConfig.load("listen: 0.0.0.0:1\notp:\n  mode: sms\n", environment: environment)
        #expect(config.listen == ListenAddress(host: "127.0.0.1", port: 18080))
        #expect(config.admin.listen == ListenAddress(host: "::1", port: 19090))
        #expect(config.redis.url == "redis://10.0.0.5:6380/2")
        #expect(config.otp.mode == .uat)
    }

    /// `0` (as operators write "off") and `0s` are the strict rule; 60s is the longest.
    @Test func refreshReuseIntervalAcceptsZeroAndUpToAMinute() throws {
        for (text, expected) in [("0", Duration.zero), ("\"0\"", .zero), ("0s", .zero), ("1500ms", .milliseconds(1500)), ("60s", .seconds(60)), ("1m", .seconds(60))] {
            let config = try TestConfig.load("otp: {mode: uat}\ntokens:\n  refresh_reuse_interval: \(text)\n")
            #expect(config.tokens.refreshReuseInterval.duration == expected, "\(text)")
        }
    }

    /// `0` writes a connection's commands at the end of every loop tick.
    @Test func redisFlushIntervalReachesTheClient() throws {
        for (text, expected) in [("0", Duration.zero), ("250", .microseconds(250)), ("10000", .milliseconds(10))] {
            let config = try TestConfig.load("otp: {mode: uat}\nredis:\n  flush_interval_us: \(text)\n")
            #expect(config.secrets.redis.flushInterval == expected, "\(text)")
        }
    }

    @Test func secretsNeverPrint() throws {
        let config = try TestConfig.load("otp: {mode: uat}")
        let dump = "\(config)"
        #expect(!dump.contains(GatewayProcess.jwtSecret))
        #expect(!dump.contains(GatewayProcess.adminToken))
    }

    /// Each bad configuration is refused with an error naming the key.
    @Test(arguments: [
        ("redis:\n  poolsize: 4\n", "redis.poolsize", "unknown key"),
        ("listne: 0.0.0.0:8080\n", "listne", "unknown key"),
        ("tokens:\n  access_ttl: ten\n", "tokens.access_ttl", "is not a duration"),
        ("tokens:\n  refresh_ttl: 30\n", "tokens.refresh_ttl", "is not a duration"),
        ("tokens:\n  refresh_reuse_interval: 61s\n", "tokens.refresh_reuse_interval", "at most 60s"),
        ("tokens:\n  refresh_reuse_interval: 2h\n", "tokens.refresh_reuse_interval", "at most 60s"),
        ("tokens:\n  refresh_reuse_interval: soon\n", "tokens.refresh_reuse_interval", "is not a duration"),
        ("tokens:\n  refresh_reuse_interval: -1s\n", "tokens.refresh_reuse_interval", "is not a duration"),
        ("redis:\n  timeout: 1.5s\n", "redis.timeout", "is not a duration"),
        ("redis:\n  pool_size: lots\n", "redis.pool_size", "whole number"),
        ("redis:\n  url: http://x\n", "redis.url", "redis://"),
        ("otp:\n  mode: carrier-pigeon\n", "otp.mode", "not one of: sms, uat"),
        ("otp:\n  mode: sms\n", "otp.sms_webhook_url", "http(s) URL"),
        ("otp:\n  mode: uat\n  uat_code: 12ab56\n", "otp.uat_code", "6 digits"),
        ("listen: 8080\n", "listen", "host:port"),
        ("trusted_proxies: [10.0.0.0/33]\n", "trusted_proxies[0]", "CIDR"),
        ("rate_limits:\n  on_store_error: maybe\n", "rate_limits.on_store_error", "deny, allow"),
        ("rate_limits:\n  otp_trigger_per_ip: {capacity: 0, refill_per_second: 1}\n", "rate_limits.otp_trigger_per_ip.capacity", "at least 1"),
        ("rate_limits:\n  otp_verify_failures_per_ip: {capacity: 0, refill_per_second: 1}\n", "rate_limits.otp_verify_failures_per_ip.capacity", "at least 1"),
        ("rate_limits:\n  otp_verify_failures_per_ip: {capacity: 5}\n", "rate_limits.otp_verify_failures_per_ip.refill_per_second", "is required"),
        ("routes:\n  - {name: a, path_prefix: user, upstream: http://127.0.0.1:1, auth: none}\n", "routes[0].path_prefix", "start with /"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: ftp://x, auth: none}\n", "routes[0].upstream", "http://"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: bearer, colour: red}\n", "routes[0].colour", "unknown key"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, rate_limit: {per: user, capacity: 1, refill_per_second: 1}}\n", "routes[0].rate_limit.per", "needs auth: bearer"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x}\n", "routes[0].auth", "is required"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, idempotency: {ttl: 0s}}\n", "routes[0].idempotency.ttl", "between 1s and 7d"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, idempotency: {ttl: 8d}}\n", "routes[0].idempotency.ttl", "between 1s and 7d"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, idempotency: {max_stored_body: 0}}\n", "routes[0].idempotency.max_stored_body", "between 1 and 1048576"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, idempotency: {required: maybe}}\n", "routes[0].idempotency.required", "true or false"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, idempotency: {key: x}}\n", "routes[0].idempotency.key", "unknown key"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, stream_idle_timeout: 0s}\n", "routes[0].stream_idle_timeout", "greater than 0"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, websocket: maybe}\n", "routes[0].websocket", "expected true or false"),
        ("server:\n  event_loops: 0\n", "server.event_loops", "between 1 and 256"),
        ("server:\n  event_loops: two\n", "server.event_loops", "whole number"),
        ("server:\n  reuse_port: yes please\n", "server.reuse_port", "true or false"),
        ("server:\n  reuseport: true\n", "server.reuseport", "unknown key"),
        ("server:\n  body_read_timeout: 0s\n", "server.body_read_timeout", "greater than 0"),
        ("server:\n  body_read_timeout: soon\n", "server.body_read_timeout", "is not a duration"),
        ("rate_limits:\n  ipv6_prefix_length: 0\n", "rate_limits.ipv6_prefix_length", "between 1 and 128"),
        ("rate_limits:\n  ipv6_prefix_length: 129\n", "rate_limits.ipv6_prefix_length", "between 1 and 128"),
        ("rate_limits:\n  ipv6_prefix_length: /64\n", "rate_limits.ipv6_prefix_length", "whole number"),
        ("routes:\n  - {name: a, path_prefix: /a/../b, upstream: http://x, auth: none}\n", "routes[0].path_prefix", "canonical"),
        ("routes:\n  - {name: a, path_prefix: /a//b, upstream: http://x, auth: none}\n", "routes[0].path_prefix", "canonical"),
        ("redis:\n  tls: {ca_file: /x.pem}\n", "redis.tls", "rediss://"),
        ("redis:\n  url: rediss://127.0.0.1:6380/0\n  tls: {ca: /x.pem}\n", "redis.tls.ca", "unknown key"),
        ("redis:\n  url: rediss://127.0.0.1:6380/0\n  tls: {ca_file: /nonexistent/ca.pem}\n", "redis.tls", "ca_file"),
        ("redis:\n  url: rediss://127.0.0.1:6380/0\n  tls: {cert_file: /x.pem}\n", "redis.tls", "go together"),
        ("redis:\n  url: rediss://127.0.0.1:6380/0\n  tls: {server_name: 10.0.0.1}\n", "redis.tls", "DNS name"),
        ("redis:\n  password_env: PG_REDIS_PASSWORD\n", "PG_REDIS_PASSWORD", "is not set"),
        ("redis:\n  wait_replicas: 17\n", "redis.wait_replicas", "between 0 and 16"),
        ("redis:\n  wait_replicas: one\n", "redis.wait_replicas", "whole number"),
        ("redis:\n  flush_interval_us: 20000\n", "redis.flush_interval_us", "between 0 and 10000"),
        ("redis:\n  flush_interval_us: -1\n", "redis.flush_interval_us", "between 0 and 10000"),
        ("redis:\n  sentinel: {nodes: [\"127.0.0.1:26379\"]}\n", "redis.sentinel.master_name", "is required"),
        ("redis:\n  sentinel: {master_name: m, nodes: []}\n", "redis.sentinel.nodes", "at least one"),
        ("redis:\n  sentinel: {master_name: m, nodes: [\"sentinel-1\"]}\n", "redis.sentinel.nodes[0]", "host:port"),
        ("redis:\n  sentinel: {master_name: m, nodes: [\"127.0.0.1:26379\"], quorum: 2}\n", "redis.sentinel.quorum", "unknown key"),
        ("redis:\n  url: redis://gw:pw@127.0.0.1/0\n  password_env: GATEWAY_JWT_SECRET\n", "redis.url", "password"),
        ("tracing:\n  otlp_endpoint: 127.0.0.1:4318\n", "tracing.otlp_endpoint", "http:// or https:// URL"),
        ("tracing:\n  otlp_endpoint: grpc://collector:4317\n", "tracing.otlp_endpoint", "http:// or https:// URL"),
        ("tracing:\n  sampling_ratio: 1.5\n", "tracing.sampling_ratio", "between 0.0 and 1.0"),
        ("tracing:\n  sampling_ratio: -0.1\n", "tracing.sampling_ratio", "between 0.0 and 1.0"),
        ("tracing:\n  sampling_ratio: often\n", "tracing.sampling_ratio", "number"),
        ("usage:\n  time_zone: Mars/Olympus_Mons\n", "usage.time_zone", "IANA time zone"),
        ("usage:\n  retention_days: 0\n", "usage.retention_days", "between 1 and 3660"),
        ("usage:\n  retain_days: 30\n", "usage.retain_days", "unknown key"),
        ("tracing:\n  service_name: \"\"\n", "tracing.service_name", "must not be empty"),
        ("tracing:\n  endpoint: http://127.0.0.1:4318\n", "tracing.endpoint", "unknown key"),
        ("redis:\n  cluster: {nodes: []}\n", "redis.cluster.nodes", "at least one"),
        ("redis:\n  cluster: {nodes: [\"node-1\"]}\n", "redis.cluster.nodes[0]", "host:port"),
        ("redis:\n  cluster: {nodes: [\"127.0.0.1:7000\"], replicas: 1}\n", "redis.cluster.replicas", "unknown key"),
        ("redis:\n  url: redis://127.0.0.1:7000/2\n  cluster: {nodes: [\"127.0.0.1:7000\"]}\n", "redis.url", "database 0"),
        ("redis:\n  cluster: {nodes: [\"127.0.0.1:7000\"]}\n  sentinel: {master_name: m, nodes: [\"127.0.0.1:26379\"]}\n", "redis.cluster", "exclude each other"),
        ("routes:\n  - {name: a, path_prefix: /payouts/, upstream: http://x, auth: none}\n  - {name: b, path_prefix: /payouts, upstream: http://x, auth: bearer}\n", "routes[1].path_prefix", "the same prefix as routes[0] (\"a\")"),
        ("routes:\n  - {name: a, path_prefix: /, upstream: http://x, auth: none}\n  - {name: b, path_prefix: /, upstream: http://x, auth: none}\n", "routes[1].path_prefix", "the same prefix as routes[0]"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: \"http://svc:s3cret@x\", auth: none}\n", "routes[0].upstream", "credentials"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: \"https://token@x/api\", auth: none}\n", "routes[0].upstream", "credentials"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: api_key, forward_api_key: yes please}\n", "routes[0].forward_api_key", "true or false"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, forward_headers: [X-Forwarded-Prefix, Authorization]}\n", "routes[0].forward_headers[1]", "is not one of: x-original-url"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, forward_headers: [X-Gateway-User-Id]}\n", "routes[0].forward_headers[0]", "is not one of"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {X-Gateway-User-Id: u-1}}}\n", "routes[0].request_headers.add[\"X-Gateway-User-Id\"]", "X-Gateway-* fields"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {remove: [X-Debug, x-gateway-assertion]}}\n", "routes[0].request_headers.remove[1]", "X-Gateway-* fields"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {Connection: close}}}\n", "routes[0].request_headers.add[\"Connection\"]", "hop-by-hop"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {remove: [Keep-Alive]}}\n", "routes[0].request_headers.remove[0]", "hop-by-hop"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {Transfer-Encoding: chunked}}}\n", "routes[0].request_headers.add[\"Transfer-Encoding\"]", "hop-by-hop"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {remove: [TE]}}\n", "routes[0].request_headers.remove[0]", "hop-by-hop"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {Trailer: X-Sum}}}\n", "routes[0].request_headers.add[\"Trailer\"]", "hop-by-hop"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {Upgrade: websocket}}}\n", "routes[0].request_headers.add[\"Upgrade\"]", "hop-by-hop"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {Proxy-Status: ok}}}\n", "routes[0].request_headers.add[\"Proxy-Status\"]", "hop-by-hop"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {Content-Length: \"0\"}}}\n", "routes[0].request_headers.add[\"Content-Length\"]", "written by the gateway"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {remove: [host]}}\n", "routes[0].request_headers.remove[0]", "written by the gateway"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {X-REQUEST-ID: fixed}}}\n", "routes[0].request_headers.add[\"X-REQUEST-ID\"]", "written by the gateway"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {remove: [Expect]}}\n", "routes[0].request_headers.remove[0]", "answered by the gateway"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {X-Forwarded-Proto: https}}}\n", "routes[0].request_headers.add[\"X-Forwarded-Proto\"]", "written by the gateway"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {X-Forwarded-Port: \"443\"}}}\n", "routes[0].request_headers.add[\"X-Forwarded-Port\"]", "trusted_proxies"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {remove: [Forwarded]}}\n", "routes[0].request_headers.remove[0]", "trusted_proxies"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {X-Real-IP: 10.0.0.1}}}\n", "routes[0].request_headers.add[\"X-Real-IP\"]", "trusted_proxies"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {Authorization: Basic eDp5}}}\n", "routes[0].request_headers.add[\"Authorization\"]", "forward_authorization"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {remove: [x-api-key]}}\n", "routes[0].request_headers.remove[0]", "forward_api_key"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {X-Original-URL: /admin}}}\n", "routes[0].request_headers.add[\"X-Original-URL\"]", "forward_headers"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {remove: [traceparent]}}\n", "routes[0].request_headers.remove[0]", "trace context"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {X_Tenant: blue}}}\n", "routes[0].request_headers.add[\"X_Tenant\"]", "holding an _"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {\"X Tenant\": blue}}}\n", "routes[0].request_headers.add[\"X Tenant\"]", "is not a field name"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {X-Tenant: \"blue\\r\\nX-Gateway-User-Id: u-1\"}}}\n", "routes[0].request_headers.add[\"X-Tenant\"]", "is not a field value"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {X-Tenant: \"blue\\0\"}}}\n", "routes[0].request_headers.add[\"X-Tenant\"]", "is not a field value"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {X-Tenant: blue, x-tenant: red}}}\n", "routes[0].request_headers.add[\"x-tenant\"]", "is named twice"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {X-Tenant: blue}, remove: [X-TENANT]}}\n", "routes[0].request_headers.remove[0]", "is also in add"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: [X-Tenant]}}\n", "routes[0].request_headers.add", "expected a mapping of field names to values"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: http://x, auth: none, request_headers: {add: {}, rename: {X-A: X-B}}}\n", "routes[0].request_headers.rename", "unknown key"),
        ("portal: {enabled: true, delivery: uat}\n", "portal.origin", "is required when portal.enabled"),
        ("portal: {enabled: true, delivery: uat, origin: \"https://partners.example.com/portal\"}\n", "portal.origin", "is not an origin"),
        ("portal: {origin: \"HTTPS://Partners.example.com\"}\n", "portal.origin", "is not an origin"),
        ("portal: {enabled: true, origin: \"https://partners.example.com\"}\n", "portal.code_webhook_url", "http(s) URL"),
        ("portal: {delivery: email}\n", "portal.delivery", "is not one of: webhook, uat"),
        ("portal: {uat_code: \"12345\"}\n", "portal.uat_code", "6 digits"),
        ("portal: {session_idle: 0s}\n", "portal.session_idle", "greater than 0"),
        ("portal: {session_idle: 2h, session_max: 1h}\n", "portal.session_idle", "at most portal.session_max"),
        ("portal: {session_max: soon}\n", "portal.session_max", "is not a duration"),
        ("portal: {enabled: true, origin: \"https://partners.example.com\", theme: dark}\n", "portal.theme", "unknown key"),
        ("authz:\n  listen: nowhere\n", "authz.listen", "is not host:port"),
        ("authz:\n  tls: {cert_file: /x.pem, key_file: /x.key}\n", "authz.tls", "needs authz.listen"),
        ("authz:\n  listen: 127.0.0.1:9090\n", "authz.listen", "the address of admin.listen"),
        ("authz:\n  listen: 127.0.0.1:9191\n  tls: {cert_file: /nonexistent.pem, key_file: /nonexistent.key}\n", "authz.tls", "cannot use /nonexistent.pem"),
        ("authz:\n  listen: 127.0.0.1:9191\n  port: 9191\n", "authz.port", "unknown key"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: none, auth: bearer, timeout: 10s}\n", "routes[0].timeout", "means nothing with upstream: none"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: none, auth: bearer, health_check: {path: /healthz}}\n", "routes[0].health_check", "means nothing with upstream: none"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: none, auth: bearer, forward_authorization: true}\n", "routes[0].forward_authorization", "means nothing with upstream: none"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: none, auth: api_key, request_headers: {add: {X-Tenant: blue}}}\n", "routes[0].request_headers", "means nothing with upstream: none"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: none, auth: bearer, websocket: true}\n", "routes[0].websocket", "means nothing with upstream: none"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: [none], auth: bearer}\n", "routes[0].upstream", "must be an http:// or https:// URL"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: \"\", auth: bearer}\n", "routes[0].upstream", "must be an http:// or https:// URL"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: \"http://x/?api_key=upstream-secret\", auth: none}\n", "routes[0].upstream", "must not hold a query"),
        ("routes:\n  - {name: a, path_prefix: /a, upstream: \"http://x/#frag\", auth: none}\n", "routes[0].upstream", "must not hold a query"),
    ])
    func badValuesNameTheirKey(yaml: String, key: String, problem: String) throws {
        let error = try #require(throws: ConfigError.self) {
            try TestConfig.load(yaml.contains("mode:") ? yaml : yaml + "otp:\n  mode: uat\n")
        }
        #expect(error.key == key)
        #expect(error.description.contains(problem), "\(error)")
        #expect(!error.description.contains("\n"))
    }

    /// A secret written where its variable's name belongs is refused without being printed.
    @Test(arguments: [
        ("users: {phone_key_env: 21eeffc1a9b04c7e84cb4f21eeffc1a9}", "users.phone_key_env", "21eeffc1a9b04c7e84cb4f21eeffc1a9"),
        ("tokens:\n  signing_keys: [{kid: k1, secret_env: \"s3cr3t-value!\"}]", "tokens.signing_keys[0].secret_env", "s3cr3t-value!"),
        ("portal: {code_webhook_secret_env: abcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdef01}", "portal.code_webhook_secret_env", "abcdefabcdef"),
        ("redis: {url: \"redis://127.0.0.1:1/0\", password_env: \"hunter2 hunter2\"}", "redis.password_env", "hunter2"),
    ])
    func aSecretInPlaceOfItsVariableNameIsNeverPrinted(yaml: String, key: String, secret: String) throws {
        let error = try #require(throws: ConfigError.self) { try TestConfig.load("otp: {mode: uat}\n" + yaml) }
        #expect(error.key == key, "\(error)")
        #expect(error.description.contains("is not an environment variable's name"), "\(error)")
        #expect(!error.description.contains(secret), "\(error)")
    }

    @Test func redisPasswordComesFromTheEnvironmentAndNeverPrints() throws {
        let config = try TestConfig.load(
            "otp: {mode: uat}\nredis:\n  url: rediss://gateway@redis.example:6380/0\n  password_env: PG_REDIS_PASSWORD\n",
            environment: TestConfig.environment.merging(["PG_REDIS_PASSWORD": "redis-password-123"]) { $1 }
        )
        #expect(config.secrets.redis.url.username == "gateway")
        #expect(config.secrets.redis.url.password == "redis-password-123")
        #expect(config.secrets.redis.url.usesTLS)
        #expect(config.secrets.redis.tls != nil)
        #expect(!"\(config)".contains("redis-password-123"))
    }

    @Test func missingAndShortSecrets() throws {
        let noSecret = try #require(throws: ConfigError.self) {
            try TestConfig.load("otp: {mode: uat}", environment: ["GATEWAY_ADMIN_TOKEN": GatewayProcess.adminToken])
        }
        #expect(noSecret.key == "GATEWAY_JWT_SECRET")
        let short = try #require(throws: ConfigError.self) {
            try TestConfig.load("otp: {mode: uat}", environment: ["GATEWAY_ADMIN_TOKEN": GatewayProcess.adminToken, "GATEWAY_JWT_SECRET": "too-short", "GATEWAY_PHONE_KEY": GatewayProcess.phoneKey])
        }
        #expect(short.key == "GATEWAY_JWT_SECRET")
        #expect(short.description.contains("32 bytes"))
        #expect(!short.description.contains("too-short"))
        let noPhoneKey = try #require(throws: ConfigError.self) {
            try TestConfig.load("otp: {mode: uat}", environment: ["GATEWAY_ADMIN_TOKEN": GatewayProcess.adminToken, "GATEWAY_JWT_SECRET": GatewayProcess.jwtSecret])
        }
        #expect(noPhoneKey.key == "GATEWAY_PHONE_KEY")
        let renamedPhoneKey = try #require(throws: ConfigError.self) {
            try TestConfig.load("otp: {mode: uat}\nusers: {phone_key_env: PHONES}", environment: TestConfig.environment.merging(["PHONES": "short"]) { $1 })
        }
        #expect(renamedPhoneKey.key == "PHONES")
        #expect(renamedPhoneKey.description.contains("32 bytes"))
        #expect(!renamedPhoneKey.description.contains("short\""))
        let noAdmin = try #require(throws: ConfigError.self) {
            try TestConfig.load("otp: {mode: uat}", environment: ["GATEWAY_JWT_SECRET": GatewayProcess.jwtSecret])
        }
        #expect(noAdmin.key == "GATEWAY_ADMIN_TOKEN")
        let rotatedKey = try #require(throws: ConfigError.self) {
            try TestConfig.load("otp: {mode: uat}\ntokens:\n  signing_keys:\n    - {kid: new, secret_env: JWT_NEW}\n    - {kid: old, secret_env: GATEWAY_JWT_SECRET}\n")
        }
        #expect(rotatedKey.key == "JWT_NEW")
    }

    /// A secret variable that is not set is read from the file its `_FILE` variable names (a
    /// mounted container secret), without the line break at its end; an unreadable file is a
    /// problem naming the variable, never the secret.
    @Test func secretsFromFiles() throws {
        let folder = try TemporaryFolder("pg-secret-files")
        let jwt = folder.path("jwt"), phone = folder.path("phone")
        try "\(GatewayProcess.jwtSecret)\n".write(toFile: jwt, atomically: true, encoding: .utf8)
        try GatewayProcess.phoneKey.write(toFile: phone, atomically: true, encoding: .utf8)
        let config = try TestConfig.load("otp: {mode: uat}", environment: [
            "GATEWAY_ADMIN_TOKEN": GatewayProcess.adminToken, "GATEWAY_JWT_SECRET_FILE": jwt, "GATEWAY_PHONE_KEY_FILE": phone,
        ])
        #expect(config.secrets.signingKeys.first?.secret.bytes == Array(GatewayProcess.jwtSecret.utf8))
        #expect(config.secrets.phoneKey.bytes == Array(GatewayProcess.phoneKey.utf8))
        // The variable itself wins over its file.
        let both = try TestConfig.load("otp: {mode: uat}", environment: TestConfig.environment.merging(["GATEWAY_JWT_SECRET_FILE": "/nonexistent"]) { $1 })
        #expect(both.secrets.signingKeys.first?.secret.bytes == Array(GatewayProcess.jwtSecret.utf8))
        let unreadable = try #require(throws: ConfigError.self) {
            try TestConfig.load("otp: {mode: uat}", environment: [
                "GATEWAY_ADMIN_TOKEN": GatewayProcess.adminToken, "GATEWAY_JWT_SECRET_FILE": "/nonexistent/jwt", "GATEWAY_PHONE_KEY": GatewayProcess.phoneKey,
            ])
        }
        #expect(unreadable.key == "GATEWAY_JWT_SECRET_FILE")
        #expect(unreadable.description.contains("cannot read /nonexistent/jwt"))
        // The portal's webhook secret too.
        let webhook = folder.path("webhook")
        try GatewayProcess.jwtSecret.write(toFile: webhook, atomically: true, encoding: .utf8)
        let portal = try TestConfig.load(
            "otp: {mode: uat}\nportal: {enabled: true, origin: \"https://partners.example.com\", delivery: webhook, code_webhook_url: \"https://hooks.example.com/codes\"}",
            environment: TestConfig.environment.merging(["GATEWAY_PORTAL_WEBHOOK_SECRET_FILE": webhook]) { $1 }
        )
        #expect(portal.secrets.portalWebhookSecret?.bytes == Array(GatewayProcess.jwtSecret.utf8))
    }

    /// The example production configuration (config/gateway.production.yaml) is valid as
    /// shipped: only its secrets are missing where they are not set.
    @Test func shippedProductionConfigChecks() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../config/gateway.production.yaml").path
        let result = GatewayConfig.check(path: path, environment: [:])
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(Set(result.missingSecrets.map(\.key)).isSuperset(of: ["GATEWAY_ADMIN_TOKEN", "GATEWAY_JWT_SECRET", "GATEWAY_PHONE_KEY", "GATEWAY_SMS_WEBHOOK_SECRET"]))
        #expect(result.config.otp.mode == .sms)
        #expect(result.config.log.format == .json)
        #expect(result.config.server.reusePort)
        #expect(!result.config.assertion.signingKeys.isEmpty, "a production gateway signs assertions with configured keys")
    }

    /// SMS webhook calls are signed: in `sms` mode the key must be there (fail closed), long
    /// enough, and never printed; `uat` mode sends nothing and needs none.
    @Test func theSMSWebhookSecretIsRequiredInSMSMode() throws {
        let sms = "otp: {mode: sms, sms_webhook_url: 'http://127.0.0.1:1/sms'}"
        let missing = try #require(throws: ConfigError.self) { try TestConfig.load(sms) }
        #expect(missing.key == "GATEWAY_SMS_WEBHOOK_SECRET")
        #expect(missing.description.contains("is not set"))
        let short = try #require(throws: ConfigError.self) {
            try TestConfig.load(sms, environment: TestConfig.environment.merging(["GATEWAY_SMS_WEBHOOK_SECRET": "short-one"]) { $1 })
        }
        #expect(short.key == "GATEWAY_SMS_WEBHOOK_SECRET" && short.description.contains("32 bytes") && !short.description.contains("short-one"))
        let secret = String(repeating: "s", count: 32)
        let renamed = try TestConfig.load(
            "otp: {mode: sms, sms_webhook_url: 'http://127.0.0.1:1/sms', sms_webhook_secret_env: SMS_KEY}",
            environment: TestConfig.environment.merging(["SMS_KEY": secret]) { $1 }
        )
        #expect(renamed.secrets.smsWebhookSecret?.bytes == Array(secret.utf8))
        #expect(!"\(renamed)".contains(secret))
        #expect(try TestConfig.load("otp: {mode: uat}").secrets.smsWebhookSecret == nil)
    }

    /// The portal's code webhook is signed with a key of its own, required when it sends codes.
    @Test func thePortalWebhookSecretIsRequiredWhenItSendsCodes() throws {
        let portal = "otp: {mode: uat}\nportal: {enabled: true, origin: \"https://partners.example.com\", code_webhook_url: 'http://127.0.0.1:1/codes'}"
        let missing = try #require(throws: ConfigError.self) { try TestConfig.load(portal) }
        #expect(missing.key == "GATEWAY_PORTAL_WEBHOOK_SECRET" && missing.description.contains("is not set"))
        let secret = String(repeating: "p", count: 32)
        let loaded = try TestConfig.load(portal, environment: TestConfig.environment.merging(["GATEWAY_PORTAL_WEBHOOK_SECRET": secret]) { $1 })
        #expect(loaded.secrets.portalWebhookSecret?.bytes == Array(secret.utf8))
        #expect(!"\(loaded)".contains(secret))
        let uat = try TestConfig.load("otp: {mode: uat}\nportal: {enabled: true, origin: \"https://partners.example.com\", delivery: uat}")
        #expect(uat.secrets.portalWebhookSecret == nil)
    }

    @Test(arguments: [("500ms", Duration.milliseconds(500)), ("30s", .seconds(30)), ("10m", .seconds(600)), ("24h", .seconds(86_400)), ("90d", .seconds(7_776_000))])
    func durations(text: String, expected: Duration) {
        #expect(ConfigDuration(text)?.duration == expected)
    }

    @Test(arguments: ["", "ten", "10", "1.5s", "10 m", "-5s", "5sec", "s"])
    func notDurations(text: String) {
        #expect(ConfigDuration(text) == nil)
    }

    @Test func trustedProxyRanges() throws {
        let range = try #require(CIDR("10.1.0.0/16"))
        #expect(range.contains("10.1.200.3"))
        #expect(!range.contains("10.2.0.1"))
        #expect(range.contains("::ffff:10.1.0.9"))
        let v6 = try #require(CIDR("fd00::/8"))
        #expect(v6.contains("fd12::1"))
        #expect(!v6.contains("10.1.0.1"))
        #expect(try #require(CIDR("127.0.0.1")).contains("127.0.0.1"))
    }
}
