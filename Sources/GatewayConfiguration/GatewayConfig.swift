import GatewayPrimitives

/// The whole configuration (docs/configuration.md), as read from YAML before environment overrides.
///
/// Every section starts from the documented defaults, so an empty file is a valid start; every
/// section is strict (see `StrictDecoding.swift`). Values that name secrets hold only the name
/// of the environment variable; `GatewayConfig.load` (GatewayConfig+Loading.swift) resolves and checks them.
package struct GatewayConfig: Sendable, Decodable {
    package var listen = ListenAddress(host: "0.0.0.0", port: 8080)
    /// HTTPS (HTTP/1.1 and HTTP/2) on `listen`; nil: plain HTTP/1.1.
    package var tls: ListenerTLS?
    package var maxBodyBytes = 1_048_576
    package var admin = Admin()
    package var redis = Redis()
    package var tokens = Tokens()
    package var otp = OTP()
    package var users = Users()
    package var trustedProxies: [CIDR] = []
    package var rateLimits = RateLimits()
    package var routes: [Route] = []
    package var assertion = Assertion()
    package var server = Server()
    package var log = Log()
    package var tracing = Tracing()
    package var web = Web()
    package var usage = Usage()
    /// Resolved from the environment by `load`; never read from the file.
    package var secrets = GatewaySecrets()

    package init() {}

    package enum CodingKeys: String, CodingKey, CaseIterable {
        case listen, tls, admin, redis, tokens, otp, users, routes, assertion, server, log, tracing, web, usage
        case maxBodyBytes = "max_body_bytes"
        case trustedProxies = "trusted_proxies"
        case rateLimits = "rate_limits"
    }

    package init(from decoder: any Decoder) throws {
        self.init()
        let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
        listen = try keys.value(.listen, or: listen)
        tls = try keys.decodeIfPresent(ListenerTLS.self, forKey: .tls)
        maxBodyBytes = try keys.value(.maxBodyBytes, or: maxBodyBytes)
        admin = try keys.value(.admin, or: admin)
        redis = try keys.value(.redis, or: redis)
        tokens = try keys.value(.tokens, or: tokens)
        otp = try keys.value(.otp, or: otp)
        users = try keys.value(.users, or: users)
        trustedProxies = try keys.value(.trustedProxies, or: trustedProxies)
        rateLimits = try keys.value(.rateLimits, or: rateLimits)
        routes = try keys.value(.routes, or: routes)
        assertion = try keys.value(.assertion, or: assertion)
        server = try keys.value(.server, or: server)
        log = try keys.value(.log, or: log)
        tracing = try keys.value(.tracing, or: tracing)
        web = try keys.value(.web, or: web)
        usage = try keys.value(.usage, or: usage)
    }
}

extension GatewayConfig {
    package struct Admin: Sendable, Decodable {
        package var listen = ListenAddress(host: "127.0.0.1", port: 9090)
        /// HTTPS on the admin listener; nil: plain HTTP (it listens on loopback by default).
        package var tls: ListenerTLS?
        /// Whether `GATEWAY_ADMIN_TOKEN` is accepted (and required) as the break-glass owner
        /// credential. False once every person has a personal credential: then the token must
        /// not be set, and only personal credentials open the admin API.
        package var breakGlass = true

        package init() {}
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case listen, tls
            case breakGlass = "break_glass"
        }
        package init(from decoder: any Decoder) throws {
            self.init()
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            listen = try keys.value(.listen, or: listen)
            tls = try keys.decodeIfPresent(ListenerTLS.self, forKey: .tls)
            breakGlass = try keys.value(.breakGlass, or: breakGlass)
        }
    }

    package struct Tokens: Sendable, Decodable {
        package var issuer = "partner-gateway"
        package var accessTTL = ConfigDuration("24h")!
        package var refreshTTL = ConfigDuration("30d")!
        /// How long after a refresh its spent token still gets the same successor back (a
        /// retry after a lost answer); `0` is the strict rule, any reuse revokes the session.
        package var refreshReuseInterval = ConfigDuration("10s")!
        package var signingKeys = [SigningKey(kid: "k1", secretEnv: "GATEWAY_JWT_SECRET")]

        package init() {}
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case issuer
            case accessTTL = "access_ttl"
            case refreshTTL = "refresh_ttl"
            case refreshReuseInterval = "refresh_reuse_interval"
            case signingKeys = "signing_keys"
        }
        package init(from decoder: any Decoder) throws {
            self.init()
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            issuer = try keys.value(.issuer, or: issuer)
            accessTTL = try keys.value(.accessTTL, or: accessTTL)
            refreshTTL = try keys.value(.refreshTTL, or: refreshTTL)
            // `0` alone (no unit) is how operators write "off".
            if (try? keys.decodeIfPresent(String.self, forKey: .refreshReuseInterval)) == "0" {
                refreshReuseInterval = ConfigDuration("0s")!
            } else {
                refreshReuseInterval = try keys.value(.refreshReuseInterval, or: refreshReuseInterval)
            }
            signingKeys = try keys.value(.signingKeys, or: signingKeys)
        }
    }

    /// One HS256 key: the first in the list signs, every one verifies (rotation).
    package struct SigningKey: Sendable, Decodable {
        package var kid: String
        package var secretEnv: String

        package init(kid: String, secretEnv: String) {
            self.kid = kid
            self.secretEnv = secretEnv
        }
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case kid
            case secretEnv = "secret_env"
        }
        package init(from decoder: any Decoder) throws {
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            kid = try keys.decode(String.self, forKey: .kid)
            secretEnv = try keys.decode(String.self, forKey: .secretEnv)
        }
    }

    package struct OTP: Sendable, Decodable {
        package enum Mode: String, Sendable, ConfigEnum {
            /// Codes go out through `sms_webhook_url`.
            case sms
            /// Testing environments: the code is always `uat_code` and nothing is sent.
            case uat
        }

        package var mode = Mode.sms
        package var uatCode = "123456"
        package var ttl = ConfigDuration("10m")!
        package var maxAttempts = 5
        package var maxFailuresPerDay = 20
        package var smsWebhookURL = ""
        /// The environment variable holding the key each webhook call is signed with
        /// (`X-Gateway-Signature`, docs/operations.md).
        package var smsWebhookSecretEnv = "GATEWAY_SMS_WEBHOOK_SECRET"
        /// How long the SMS webhook may take before the trigger answers 503 (an extension).
        package var smsTimeout = ConfigDuration("5s")!

        package init() {}
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case mode, ttl
            case uatCode = "uat_code"
            case maxAttempts = "max_attempts"
            case maxFailuresPerDay = "max_failures_per_day"
            case smsWebhookURL = "sms_webhook_url"
            case smsWebhookSecretEnv = "sms_webhook_secret_env"
            case smsTimeout = "sms_timeout"
        }
        package init(from decoder: any Decoder) throws {
            self.init()
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            mode = try keys.value(.mode, or: mode)
            uatCode = try keys.value(.uatCode, or: uatCode)
            ttl = try keys.value(.ttl, or: ttl)
            maxAttempts = try keys.value(.maxAttempts, or: maxAttempts)
            maxFailuresPerDay = try keys.value(.maxFailuresPerDay, or: maxFailuresPerDay)
            smsWebhookURL = try keys.value(.smsWebhookURL, or: smsWebhookURL)
            smsWebhookSecretEnv = try keys.value(.smsWebhookSecretEnv, or: smsWebhookSecretEnv)
            smsTimeout = try keys.value(.smsTimeout, or: smsTimeout)
        }
    }

    /// Drivers' records (see docs/configuration.md).
    package struct Users: Sendable, Decodable {
        /// The environment variable holding the HMAC key that phone numbers and OTP codes
        /// are hashed with before they reach Redis (docs/security-model.md). It must never change: the
        /// phone → user index is addressed by it.
        package var phoneKeyEnv = "GATEWAY_PHONE_KEY"

        package init() {}
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case phoneKeyEnv = "phone_key_env"
        }
        package init(from decoder: any Decoder) throws {
            self.init()
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            phoneKeyEnv = try keys.value(.phoneKeyEnv, or: phoneKeyEnv)
        }
    }

    /// A token bucket: holds up to `capacity` tokens, refilled at `refill_per_second`.
    package struct Bucket: Sendable, Hashable, Decodable {
        package var capacity: Int
        package var refillPerSecond: Double

        package init(capacity: Int, refillPerSecond: Double) {
            self.capacity = capacity
            self.refillPerSecond = refillPerSecond
        }
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case capacity
            case refillPerSecond = "refill_per_second"
        }
        package init(from decoder: any Decoder) throws {
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            capacity = try keys.decode(Int.self, forKey: .capacity)
            refillPerSecond = try keys.decode(Double.self, forKey: .refillPerSecond)
        }
    }

    package struct RateLimits: Sendable, Decodable {
        package enum StoreErrorPolicy: String, Sendable, ConfigEnum {
            /// Proxied routes answer 503 while the limiter cannot reach Redis.
            case deny
            /// Proxied routes are forwarded unlimited while the limiter cannot reach Redis.
            case allow
        }

        package var otpTriggerPerPhone = Bucket(capacity: 3, refillPerSecond: 0.005)
        package var otpTriggerPerIP = Bucket(capacity: 20, refillPerSecond: 0.2)
        /// Failed API-key checks per client IP (brute force).
        package var apiKeyFailuresPerIP = Bucket(capacity: 10, refillPerSecond: 0.1)
        /// Failed OTP verifications per client IP, across phones: one every 100 s after a
        /// burst of 30 bounds guessing from one address to under a thousand codes a day.
        package var otpVerifyFailuresPerIP = Bucket(capacity: 30, refillPerSecond: 0.01)
        package var onStoreError = StoreErrorPolicy.deny
        /// Per-address buckets hold an IPv6 client's whole network of this prefix length (one
        /// subscriber usually holds a /64); IPv4 clients are counted by address.
        package var ipv6PrefixLength = 64

        package init() {}
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case otpTriggerPerPhone = "otp_trigger_per_phone"
            case otpTriggerPerIP = "otp_trigger_per_ip"
            case apiKeyFailuresPerIP = "api_key_failures_per_ip"
            case otpVerifyFailuresPerIP = "otp_verify_failures_per_ip"
            case onStoreError = "on_store_error"
            case ipv6PrefixLength = "ipv6_prefix_length"
        }
        package init(from decoder: any Decoder) throws {
            self.init()
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            otpTriggerPerPhone = try keys.value(.otpTriggerPerPhone, or: otpTriggerPerPhone)
            otpTriggerPerIP = try keys.value(.otpTriggerPerIP, or: otpTriggerPerIP)
            apiKeyFailuresPerIP = try keys.value(.apiKeyFailuresPerIP, or: apiKeyFailuresPerIP)
            otpVerifyFailuresPerIP = try keys.value(.otpVerifyFailuresPerIP, or: otpVerifyFailuresPerIP)
            onStoreError = try keys.value(.onStoreError, or: onStoreError)
            ipv6PrefixLength = try keys.value(.ipv6PrefixLength, or: ipv6PrefixLength)
        }
    }

    package struct Route: Sendable, Decodable {
        package enum Auth: String, Sendable, ConfigEnum {
            case bearer
            case apiKey = "api_key"
            case none
        }

        package struct RateLimit: Sendable, Hashable, Decodable {
            package enum Per: String, Sendable, ConfigEnum { case user, partner, ip }
            package var per: Per
            package var bucket: Bucket

            package enum CodingKeys: String, CodingKey, CaseIterable {
                case per, capacity
                case refillPerSecond = "refill_per_second"
            }
            package init(from decoder: any Decoder) throws {
                let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
                per = try keys.decode(Per.self, forKey: .per)
                bucket = Bucket(
                    capacity: try keys.decode(Int.self, forKey: .capacity),
                    refillPerSecond: try keys.decode(Double.self, forKey: .refillPerSecond)
                )
            }
        }

        package var name: String
        package var pathPrefix: String
        /// The instances the route forwards to, in the file's order (one for a one-URL `upstream`).
        package var targets: [UpstreamTarget]
        /// The first target's URL: the one upstream of a one-URL route.
        package var upstream: String { targets.first?.url ?? "" }
        package var balance = Balance.roundRobin
        package var healthCheck: HealthCheck?
        package var outlier = Outlier()
        package var retries = Retries()
        package var auth: Auth
        package var scope = ""
        package var stripPrefix = false
        package var timeout = ConfigDuration("5s")!
        /// Whether a WebSocket handshake (`Upgrade: websocket`) may upgrade on this route.
        package var websocket = false
        /// The longest silence, either way, once a response body or an upgraded connection has
        /// started (`timeout` bounds only the wait for the response head).
        package var streamIdleTimeout = ConfigDuration("5m")!
        package var forwardAuthorization = false
        /// Partners' live keys stay at the gateway unless a route needs them upstream.
        package var forwardAPIKey = false
        /// Routing and identity fields (`X-Forwarded-Prefix`, ...) the client may send to this
        /// route's upstream; every other one is dropped (``HeaderName/routingAndIdentityFields``).
        package var forwardHeaders: [String] = []
        package var rateLimit: RateLimit?
        /// `Idempotency-Key` handling of `POST` and `PATCH`; nil: the header is only forwarded.
        package var idempotency: Idempotency?
        /// Trust and client certificate for an `https://` upstream.
        package var tls: UpstreamTLS?
        /// false: the upstream answers CORS itself (preflights reach it, its fields pass).
        package var cors = true

        package enum CodingKeys: String, CodingKey, CaseIterable {
            case name, upstream, auth, scope, timeout, tls, balance, outlier, retries, cors
            case healthCheck = "health_check"
            case pathPrefix = "path_prefix"
            case stripPrefix = "strip_prefix"
            case forwardAuthorization = "forward_authorization"
            case forwardAPIKey = "forward_api_key"
            case forwardHeaders = "forward_headers"
            case rateLimit = "rate_limit"
            case idempotency
            case websocket
            case streamIdleTimeout = "stream_idle_timeout"
        }
        package init(from decoder: any Decoder) throws {
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            name = try keys.decode(String.self, forKey: .name)
            pathPrefix = try keys.decode(String.self, forKey: .pathPrefix)
            targets = try Self.decodeTargets(keys)
            balance = try keys.value(.balance, or: balance)
            healthCheck = try keys.decodeIfPresent(HealthCheck.self, forKey: .healthCheck)
            outlier = try keys.value(.outlier, or: outlier)
            retries = try keys.value(.retries, or: retries)
            auth = try keys.decode(Auth.self, forKey: .auth)
            scope = try keys.value(.scope, or: scope)
            stripPrefix = try keys.value(.stripPrefix, or: stripPrefix)
            timeout = try keys.value(.timeout, or: timeout)
            websocket = try keys.value(.websocket, or: websocket)
            streamIdleTimeout = try keys.value(.streamIdleTimeout, or: streamIdleTimeout)
            forwardAuthorization = try keys.value(.forwardAuthorization, or: forwardAuthorization)
            forwardAPIKey = try keys.value(.forwardAPIKey, or: forwardAPIKey)
            forwardHeaders = try keys.value(.forwardHeaders, or: forwardHeaders)
            rateLimit = try keys.decodeIfPresent(RateLimit.self, forKey: .rateLimit)
            idempotency = try keys.decodeIfPresent(Idempotency.self, forKey: .idempotency)
            tls = try keys.decodeIfPresent(UpstreamTLS.self, forKey: .tls)
            cors = try keys.value(.cors, or: cors)
        }
    }

    /// The `X-Gateway-Assertion` upstreams receive (docs/public-api.md; an extension of the schema).
    package struct Assertion: Sendable, Decodable {
        /// Lifetime of one assertion, 1s...5m.
        package var ttl = ConfigDuration("5m")!
        /// ES256 keys: the first signs, all are published in the JWKS (rotation). Empty means
        /// an ephemeral key per process, which only suits a single instance.
        package var signingKeys: [AssertionKey] = []

        package init() {}
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case ttl
            case signingKeys = "signing_keys"
        }
        package init(from decoder: any Decoder) throws {
            self.init()
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            ttl = try keys.value(.ttl, or: ttl)
            signingKeys = try keys.value(.signingKeys, or: signingKeys)
        }
    }

    /// One ES256 assertion key: a PEM P-256 private key (PKCS#8 or SEC1) in a file, so the
    /// key stays out of the YAML and the environment.
    package struct AssertionKey: Sendable, Decodable {
        package var kid: String
        package var privateKeyFile: String

        package enum CodingKeys: String, CodingKey, CaseIterable {
            case kid
            case privateKeyFile = "private_key_file"
        }
        package init(from decoder: any Decoder) throws {
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            kid = try keys.decode(String.self, forKey: .kid)
            privateKeyFile = try keys.decode(String.self, forKey: .privateKeyFile)
        }
    }

    /// Listener behaviour: timeouts, limits, threads (see docs/configuration.md).
    package struct Server: Sendable, Decodable {
        /// How long in-flight requests may run after SIGTERM before they are cut off.
        package var drainTimeout = ConfigDuration("30s")!
        /// A client connection with no request in progress is closed after this long.
        package var idleTimeout = ConfigDuration("60s")!
        /// A client must send its first request's complete head within this long of connecting.
        package var headerReadTimeout = ConfigDuration("10s")!
        /// The longest wait between two reads of a proxied request's body, and the time the
        /// gateway's own endpoints allow for their whole body; past it: `408`, then close.
        package var bodyReadTimeout = ConfigDuration("10s")!
        /// Largest request head (all header fields) accepted; beyond it the response is `431`.
        package var maxHeaderBytes = 32 * 1024
        /// SwiftNIO event-loop threads serving every connection (client, upstream, Redis);
        /// nil: one per CPU core, like nginx's `worker_processes auto`.
        package var eventLoops: Int?
        /// How often upstream targets named by a host name are looked up again, so instances
        /// that come and go behind one DNS name are followed without a reload.
        package var upstreamDNSRefresh = ConfigDuration("30s")!
        /// Upgraded (WebSocket) connections one user (or a partner's key) may hold open on this
        /// instance; the next handshake is `429`.
        package var maxWebSocketsPerUser = 16

        package init() {}
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case upstreamDNSRefresh = "upstream_dns_refresh"
            case maxWebSocketsPerUser = "max_websockets_per_user"
            case drainTimeout = "drain_timeout"
            case idleTimeout = "idle_timeout"
            case headerReadTimeout = "header_read_timeout"
            case bodyReadTimeout = "body_read_timeout"
            case maxHeaderBytes = "max_header_bytes"
            case eventLoops = "event_loops"
        }
        package init(from decoder: any Decoder) throws {
            self.init()
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            drainTimeout = try keys.value(.drainTimeout, or: drainTimeout)
            idleTimeout = try keys.value(.idleTimeout, or: idleTimeout)
            headerReadTimeout = try keys.value(.headerReadTimeout, or: headerReadTimeout)
            bodyReadTimeout = try keys.value(.bodyReadTimeout, or: bodyReadTimeout)
            maxHeaderBytes = try keys.value(.maxHeaderBytes, or: maxHeaderBytes)
            eventLoops = try keys.decodeIfPresent(Int.self, forKey: .eventLoops)
            upstreamDNSRefresh = try keys.value(.upstreamDNSRefresh, or: upstreamDNSRefresh)
            maxWebSocketsPerUser = try keys.value(.maxWebSocketsPerUser, or: maxWebSocketsPerUser)
        }
    }

    package struct Log: Sendable, Decodable {
        package enum Level: String, Sendable, ConfigEnum { case trace, debug, info, notice, warning, error, critical }
        package enum Format: String, Sendable, ConfigEnum {
            /// One JSON object per line, for log collectors.
            case json
            /// swift-log's plain lines, for reading in a terminal during development.
            case text
        }

        package var level = Level.info
        package var format = Format.json
        /// One line per request, buffered (docs/operations.md, "Access log").
        package var accessLog = true

        package init() {}
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case level, format
            case accessLog = "access_log"
        }
        package init(from decoder: any Decoder) throws {
            self.init()
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            level = try keys.value(.level, or: level)
            format = try keys.value(.format, or: format)
            accessLog = try keys.value(.accessLog, or: accessLog)
        }
    }
}
