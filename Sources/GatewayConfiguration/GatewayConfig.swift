import GatewayPrimitives

/// The whole configuration (docs/configuration.md), as read from YAML before environment overrides.
///
/// Every section starts from the documented defaults, so an empty file is a valid start; every
/// section is strict (``ConfigSection``). Values that name secrets hold only the name of the
/// environment variable; `GatewayConfig.load` (GatewayConfig+Loading.swift) resolves and checks them.
package struct GatewayConfig: Sendable, ConfigSection {
    @Key("listen") package var listen = ListenAddress(host: "0.0.0.0", port: 8080)
    /// HTTPS (HTTP/1.1 and HTTP/2) on `listen`; nil: plain HTTP/1.1.
    @Key("tls") package var tls: ListenerTLS? = nil
    @Key("max_body_bytes") package var maxBodyBytes = 1_048_576
    @Key("admin") package var admin = Admin()
    /// The authorization listener for edges and services (off unless `authz.listen` is set).
    @Key("authz") package var authz = Authz()
    @Key("redis") package var redis = Redis()
    @Key("tokens") package var tokens = Tokens()
    @Key("otp") package var otp = OTP()
    @Key("users") package var users = Users()
    @Key("trusted_proxies") package var trustedProxies: [CIDR] = []
    @Key("rate_limits") package var rateLimits = RateLimits()
    @Key("routes") package var routes: [Route] = []
    @Key("assertion") package var assertion = Assertion()
    @Key("server") package var server = Server()
    @Key("log") package var log = Log()
    @Key("tracing") package var tracing = Tracing()
    @Key("web") package var web = Web()
    @Key("usage") package var usage = Usage()
    @Key("portal") package var portal = Portal()
    /// Resolved from the environment by `load`; never read from the file.
    package var secrets = GatewaySecrets()

    package init() {}
}

extension GatewayConfig {
    package struct Admin: Sendable, ConfigSection {
        @Key("listen") package var listen = ListenAddress(host: "127.0.0.1", port: 9090)
        /// HTTPS on the admin listener; nil: plain HTTP (it listens on loopback by default).
        @Key("tls") package var tls: ListenerTLS? = nil
        /// Whether `GATEWAY_ADMIN_TOKEN` is accepted (and required) as the break-glass owner
        /// credential. False once every person has a personal credential: then the token must
        /// not be set, and only personal credentials open the admin API.
        @Key("break_glass") package var breakGlass = true

        package init() {}
    }

    package struct Tokens: Sendable, ConfigSection {
        @Key("issuer") package var issuer = "partner-gateway"
        @Key("access_ttl") package var accessTTL = ConfigDuration("24h")!
        @Key("refresh_ttl") package var refreshTTL = ConfigDuration("30d")!
        /// How long after a refresh its spent token still gets the same successor back (a
        /// retry after a lost answer); `0` is the strict rule, any reuse revokes the session.
        @Key("refresh_reuse_interval", read: Tokens.interval) package var refreshReuseInterval = ConfigDuration("10s")!
        @Key("signing_keys") package var signingKeys = [SigningKey(kid: "k1", secretEnv: "GATEWAY_JWT_SECRET")]

        package init() {}

        /// A duration, or `0` alone (no unit): how operators write "off".
        private static func interval(_ keys: KeyedDecodingContainer<AnyConfigKey>, _ key: AnyConfigKey) throws -> ConfigDuration {
            if (try? keys.decode(String.self, forKey: key)) == "0" { return ConfigDuration("0s")! }
            return try keys.decode(ConfigDuration.self, forKey: key)
        }
    }

    /// One HS256 key: the first in the list signs, every one verifies (rotation).
    package struct SigningKey: Sendable, ConfigSection {
        @Key("kid", .required) package var kid = ""
        @Key("secret_env", .required) package var secretEnv = ""

        package init() {}
        package init(kid: String, secretEnv: String) {
            self.kid = kid
            self.secretEnv = secretEnv
        }
    }

    package struct OTP: Sendable, ConfigSection {
        package enum Mode: String, Sendable, ConfigEnum {
            /// Codes go out through `sms_webhook_url`.
            case sms
            /// Testing environments: the code is always `uat_code` and nothing is sent.
            case uat
        }

        @Key("mode") package var mode = Mode.sms
        @Key("uat_code") package var uatCode = "123456"
        @Key("ttl") package var ttl = ConfigDuration("10m")!
        @Key("max_attempts") package var maxAttempts = 5
        @Key("max_failures_per_day") package var maxFailuresPerDay = 20
        @Key("sms_webhook_url") package var smsWebhookURL = ""
        /// The environment variable holding the key each webhook call is signed with
        /// (`X-Gateway-Signature`, docs/operations.md).
        @Key("sms_webhook_secret_env") package var smsWebhookSecretEnv = "GATEWAY_SMS_WEBHOOK_SECRET"
        /// How long the SMS webhook may take before the trigger answers 503 (an extension).
        @Key("sms_timeout") package var smsTimeout = ConfigDuration("5s")!

        package init() {}
    }

    /// Drivers' records (see docs/configuration.md).
    package struct Users: Sendable, ConfigSection {
        /// The environment variable holding the HMAC key that phone numbers and OTP codes
        /// are hashed with before they reach Redis (docs/security-model.md). It must never change: the
        /// phone → user index is addressed by it.
        @Key("phone_key_env") package var phoneKeyEnv = "GATEWAY_PHONE_KEY"

        package init() {}
    }

    /// A token bucket: holds up to `capacity` tokens, refilled at `refill_per_second`.
    package struct Bucket: Sendable, Hashable, ConfigSection {
        @Key("capacity", .required) package var capacity = 0
        @Key("refill_per_second", .required) package var refillPerSecond = 0.0

        package init() {}
        package init(capacity: Int, refillPerSecond: Double) {
            self.capacity = capacity
            self.refillPerSecond = refillPerSecond
        }
    }

    package struct RateLimits: Sendable, ConfigSection {
        package enum StoreErrorPolicy: String, Sendable, ConfigEnum {
            /// Proxied routes answer 503 while the limiter cannot reach Redis.
            case deny
            /// Proxied routes are forwarded unlimited while the limiter cannot reach Redis.
            case allow
        }

        @Key("otp_trigger_per_phone") package var otpTriggerPerPhone = Bucket(capacity: 3, refillPerSecond: 0.005)
        @Key("otp_trigger_per_ip") package var otpTriggerPerIP = Bucket(capacity: 20, refillPerSecond: 0.2)
        /// Failed API-key checks per client IP (brute force).
        @Key("api_key_failures_per_ip") package var apiKeyFailuresPerIP = Bucket(capacity: 10, refillPerSecond: 0.1)
        /// Failed OTP verifications per client IP, across phones: one every 100 s after a
        /// burst of 30 bounds guessing from one address to under a thousand codes a day.
        @Key("otp_verify_failures_per_ip") package var otpVerifyFailuresPerIP = Bucket(capacity: 30, refillPerSecond: 0.01)
        @Key("on_store_error") package var onStoreError = StoreErrorPolicy.deny
        /// Per-address buckets hold an IPv6 client's whole network of this prefix length (one
        /// subscriber usually holds a /64); IPv4 clients are counted by address.
        @Key("ipv6_prefix_length") package var ipv6PrefixLength = 64

        package init() {}
    }

    package struct Route: Sendable, ConfigSection {
        package enum Auth: String, Sendable, ConfigEnum {
            case bearer
            case apiKey = "api_key"
            case none
        }

        package struct RateLimit: Sendable, Hashable, ConfigSection {
            package enum Per: String, Sendable, ConfigEnum { case user, partner, ip }
            @Key("per", .required) package var per = Per.user
            @Key("capacity", .required) package var capacity = 0
            @Key("refill_per_second", .required) package var refillPerSecond = 0.0

            package init() {}

            package var bucket: Bucket { Bucket(capacity: capacity, refillPerSecond: refillPerSecond) }
        }

        // The defaults of required keys never survive decoding; `auth`'s is the strictest anyway.
        @Key("name", .required) package var name = ""
        @Key("path_prefix", .required) package var pathPrefix = ""
        /// The instances the route forwards to, in the file's order (one for a one-URL `upstream`).
        @Key("upstream", .required, read: Route.readTargets) package var targets: [UpstreamTarget] = []
        /// The first target's URL: the one upstream of a one-URL route.
        package var upstream: String { targets.first?.url ?? "" }
        @Key("balance") package var balance = Balance.roundRobin
        @Key("health_check") package var healthCheck: HealthCheck? = nil
        @Key("outlier") package var outlier = Outlier()
        @Key("retries") package var retries = Retries()
        @Key("auth", .required) package var auth = Auth.bearer
        @Key("scope") package var scope = ""
        @Key("strip_prefix") package var stripPrefix = false
        @Key("timeout") package var timeout = ConfigDuration("5s")!
        /// Whether a WebSocket handshake (`Upgrade: websocket`) may upgrade on this route.
        @Key("websocket") package var websocket = false
        /// The longest silence, either way, once a response body or an upgraded connection has
        /// started (`timeout` bounds only the wait for the response head).
        @Key("stream_idle_timeout") package var streamIdleTimeout = ConfigDuration("5m")!
        @Key("forward_authorization") package var forwardAuthorization = false
        /// Partners' live keys stay at the gateway unless a route needs them upstream.
        @Key("forward_api_key") package var forwardAPIKey = false
        /// Routing and identity fields (`X-Forwarded-Prefix`, ...) the client may send to this
        /// route's upstream; every other one is dropped (``HeaderName/routingAndIdentityFields``).
        @Key("forward_headers") package var forwardHeaders: [String] = []
        /// Fields set on, and dropped from, every request forwarded on this route.
        @Key("request_headers") package var requestHeaders = RequestHeaders()
        @Key("rate_limit") package var rateLimit: RateLimit? = nil
        /// `Idempotency-Key` handling of `POST` and `PATCH`; nil: the header is only forwarded.
        @Key("idempotency") package var idempotency: Idempotency? = nil
        /// Trust and client certificate for an `https://` upstream.
        @Key("tls") package var tls: UpstreamTLS? = nil
        /// false: the upstream answers CORS itself (preflights reach it, its fields pass).
        @Key("cors") package var cors = true

        package init() {}
    }

    /// The `X-Gateway-Assertion` upstreams receive (docs/public-api.md; an extension of the schema).
    package struct Assertion: Sendable, ConfigSection {
        /// Lifetime of one assertion, 1s...5m.
        @Key("ttl") package var ttl = ConfigDuration("5m")!
        /// ES256 keys: the first signs, all are published in the JWKS (rotation). Empty means
        /// an ephemeral key per process, which only suits a single instance.
        @Key("signing_keys") package var signingKeys: [AssertionKey] = []

        package init() {}
    }

    /// One ES256 assertion key: a PEM P-256 private key (PKCS#8 or SEC1) in a file, so the
    /// key stays out of the YAML and the environment.
    package struct AssertionKey: Sendable, ConfigSection {
        @Key("kid", .required) package var kid = ""
        @Key("private_key_file", .required) package var privateKeyFile = ""

        package init() {}
    }

    /// Listener behaviour: timeouts, limits, threads (see docs/configuration.md).
    package struct Server: Sendable, ConfigSection {
        /// How long in-flight requests may run after SIGTERM before they are cut off.
        @Key("drain_timeout") package var drainTimeout = ConfigDuration("30s")!
        /// A client connection with no request in progress is closed after this long.
        @Key("idle_timeout") package var idleTimeout = ConfigDuration("60s")!
        /// A client must send its first request's complete head within this long of connecting.
        @Key("header_read_timeout") package var headerReadTimeout = ConfigDuration("10s")!
        /// The longest wait between two reads of a proxied request's body, and the time the
        /// gateway's own endpoints allow for their whole body; past it: `408`, then close.
        @Key("body_read_timeout") package var bodyReadTimeout = ConfigDuration("10s")!
        /// Largest request head (all header fields) accepted; beyond it the response is `431`.
        @Key("max_header_bytes") package var maxHeaderBytes = 32 * 1024
        /// SwiftNIO event-loop threads serving every connection (client, upstream, Redis);
        /// nil: one per CPU core, like nginx's `worker_processes auto`.
        @Key("event_loops") package var eventLoops: Int? = nil
        /// How often upstream targets named by a host name are looked up again, so instances
        /// that come and go behind one DNS name are followed without a reload.
        @Key("upstream_dns_refresh") package var upstreamDNSRefresh = ConfigDuration("30s")!
        /// Upgraded (WebSocket) connections one user (or a partner's key) may hold open on this
        /// instance; the next handshake is `429`.
        @Key("max_websockets_per_user") package var maxWebSocketsPerUser = 16
        /// Every listener binds with `SO_REUSEPORT`, so a second gateway process can start on
        /// the same ports and take over while this one drains (docs/deploy.md, "Upgrades").
        @Key("reuse_port") package var reusePort = false

        package init() {}
    }

    package struct Log: Sendable, ConfigSection {
        package enum Level: String, Sendable, ConfigEnum { case trace, debug, info, notice, warning, error, critical }
        package enum Format: String, Sendable, ConfigEnum {
            /// One JSON object per line, for log collectors.
            case json
            /// swift-log's plain lines, for reading in a terminal during development.
            case text
        }

        @Key("level") package var level = Level.info
        @Key("format") package var format = Format.json
        /// One line per request, buffered (docs/operations.md, "Access log").
        @Key("access_log") package var accessLog = true

        package init() {}
    }
}
