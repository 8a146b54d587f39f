import AsyncHTTPClient
import DriverSessions
import DriverTokens
import GatewayAdmission
import GatewayConfiguration
import GatewayEdge
import GatewayEndpoints
import GatewayObservability
import GatewayPrimitives
import GatewayProxy
import JWTKit
import KeyRegistry
import Logging
import Metrics
import RateLimit
import RedisClient
import Tracing

/// Everything the listeners share, built once from the configuration.
struct GatewayDependencies: EndpointDependencies {
    let config: GatewayConfig
    let logger: Logger
    let redis: RedisConnectionPool
    let redisConfiguration: RedisConfiguration
    let limiter: any RateLimiter
    let registry: KeyRegistry
    let keyVerifier: KeyVerifier
    let auditLog: AuditLog
    let admins: AdminRegistry
    let members: MemberRegistry
    let memberSessions: MemberSessions
    let portalDelivery: OTPDelivery
    let portalSite: PortalSite?
    let clientAddress: ClientAddress
    let apiKeys: APIKeyAuthenticator
    /// Calls per key, day and outcome, flushed to Redis once a second (``UsageFlushService``).
    let usage: UsageCounter?
    let quotaCalendar: QuotaCalendar
    let policies: RateLimitPolicies
    let rateLimitGate: RateLimitGate
    let webhookClient: HTTPClient
    let phoneHasher: PhoneHasher
    let otps: OTPStore
    let otpDelivery: OTPDelivery
    let sessions: SessionStore
    let revocations: SessionRevocations
    let tokenIssuer: TokenIssuer
    let bearer: BearerAuthenticator
    let assertions: AssertionSigner
    /// The compiled `routes`, with one upstream connection pool per `host:port`.
    let routes: RouteTable
    /// Where every listener's access lines go (the writer knows whether `log.access_log` is on).
    let accessLog: AccessLogWriter?
    /// The public and admin listeners' certificates, when they have TLS. A configuration
    /// reload (SIGHUP) calls `reload()` on each; ``CertificateFileWatcher`` does on a change.
    let publicCertificates: CertificateStore?
    let adminCertificates: CertificateStore?
    /// The authorization listener's, when it is on and has TLS (`authz.tls`).
    let authzCertificates: CertificateStore?
    /// Spans and their export, when `tracing.otlp_endpoint` is set.
    let tracing: RequestTracing?
    /// Whether Redis is usable, as the subscriber and the cluster map tell (`/readyz`).
    let readiness: RedisReadiness
    /// Open WebSocket connections, closed when an invalidation ends their credential.
    let upgraded: UpgradedConnections

    init(config: GatewayConfig, logger: Logger, accessLog: AccessLogWriter? = nil) async throws {
        self.config = config
        self.logger = logger
        self.accessLog = accessLog
        redisConfiguration = config.secrets.redis
        var redisLogger = logger
        redisLogger[metadataKey: "component"] = "redis"
        tracing = try RequestTracing.make(config.tracing, logger: logger)
        redis = RedisConnectionPool(
            configuration: redisConfiguration, logger: redisLogger, observer: RedisMetrics.observer(poolSize: config.redis.poolSize),
            tracer: tracing?.tracer
        )
        readiness = RedisReadiness(cluster: redisConfiguration.cluster)
        redisConfiguration.sentinel?.onPrimary { [redis] primary, isFailover in
            RedisTopologyMetrics.primary("\(primary)", topology: "sentinel", isFailover: isFailover)
            if isFailover { redis.dropConnections() }
        }
        redisConfiguration.cluster?.onPrimaries { primaries, isFailover in
            RedisTopologyMetrics.primaries(primaries.map(\.description), topology: "cluster", isFailover: isFailover)
        }
        if redisConfiguration.sentinel == nil, redisConfiguration.cluster == nil {
            RedisTopologyMetrics.primary("\(redisConfiguration.url.host):\(redisConfiguration.url.port)", topology: "standalone", isFailover: false)
        }
        limiter = RedisRateLimiter(redis: redis)
        registry = KeyRegistry(redis: redis)
        keyVerifier = KeyVerifier(registry: registry, logger: logger, cacheLookups: { CacheMetrics.key.record(hit: $0) })
        auditLog = AuditLog(redis: redis)
        admins = AdminRegistry(redis: redis)
        members = MemberRegistry(redis: redis)
        memberSessions = MemberSessions(redis: redis, idle: config.portal.sessionIdle.duration, lifetime: config.portal.sessionMax.duration)
        portalSite = config.portal.enabled ? try PortalSite.load() : nil
        clientAddress = ClientAddress(trustedProxies: config.trustedProxies)
        policies = RateLimitPolicies(limits: config.rateLimits)
        rateLimitGate = RateLimitGate(limiter: limiter, logger: logger)
        quotaCalendar = QuotaCalendar(timeZone: config.usage.zone ?? QuotaCalendar.utc.timeZone)
        usage = config.usage.enabled
            ? UsageCounter(redis: redis, calendar: quotaCalendar, retentionDays: config.usage.retentionDays, logger: logger) : nil
        apiKeys = APIKeyAuthenticator(verifier: keyVerifier, limiter: limiter, policies: policies, quotaCalendar: quotaCalendar, usage: usage)
        webhookClient = WebhookClient.shared

        phoneHasher = try PhoneHasher(key: config.secrets.phoneKey.bytes)
        otps = OTPStore(redis: redis, hasher: phoneHasher, policy: OTPPolicy(
            lifetime: config.otp.ttl.duration,
            maxAttempts: config.otp.maxAttempts,
            maxFailuresPerWindow: config.otp.maxFailuresPerDay
        ))
        let otpMode: OTPDelivery.Mode
        switch config.otp.mode {
        case .uat:
            otpMode = .uat(code: config.otp.uatCode)
        case .sms:
            // Loading refuses `sms` without the key; never sign with none.
            guard let secret = config.secrets.smsWebhookSecret else {
                throw ConfigError(key: config.otp.smsWebhookSecretEnv, "is not set (the key SMS webhook calls are signed with)")
            }
            otpMode = .webhook(url: config.otp.smsWebhookURL, secret: secret, timeout: config.otp.smsTimeout.duration)
        }
        otpDelivery = OTPDelivery(mode: otpMode, lifetime: config.otp.ttl.duration, httpClient: webhookClient, logger: logger)
        var portalMode = OTPDelivery.Mode.uat(code: config.portal.uatCode)
        if config.portal.sendsCodes {
            // Loading refuses a webhook without its key; never sign with none.
            guard let secret = config.secrets.portalWebhookSecret else {
                throw ConfigError(key: config.portal.codeWebhookSecretEnv, "is not set (the key portal code webhook calls are signed with)")
            }
            portalMode = .webhook(url: config.portal.codeWebhookURL, secret: secret, timeout: PortalSite.codeWebhookTimeout)
        }
        portalDelivery = OTPDelivery(mode: portalMode, channel: .email, lifetime: config.otp.ttl.duration, httpClient: webhookClient, logger: logger)
        let accessTTL = config.tokens.accessTTL.duration
        sessions = SessionStore(
            redis: redis, hasher: phoneHasher,
            successorKey: RefreshSuccessorKey(derivingFrom: config.secrets.phoneKey.bytes),
            refreshTTL: config.tokens.refreshTTL.duration, accessTTL: accessTTL,
            reuseInterval: config.tokens.refreshReuseInterval.duration
        )
        revocations = SessionRevocations(redis: redis, accessTTL: accessTTL, logger: logger)
        let signingKeys = try config.secrets.signingKeys.map { try AccessTokenSigningKey(kid: $0.kid, secret: $0.secret.bytes) }
        let signer = try await AccessTokenSigner(keys: signingKeys, issuer: config.tokens.issuer, timeToLive: accessTTL.inSeconds)
        let verifier = try await AccessTokenVerifier(keys: signingKeys, issuer: config.tokens.issuer)
        tokenIssuer = TokenIssuer(signer: signer, revocations: revocations)
        bearer = BearerAuthenticator(verifier: verifier, revocations: revocations)
        upgraded = UpgradedConnections(bearer: bearer, keys: keyVerifier, logger: logger, maxPerUser: config.server.maxWebSocketsPerUser)
        assertions = try await Self.makeAssertionSigner(config: config, logger: logger)
        routes = try RouteTable(config.routes, clientScheme: config.tls == nil ? "http" : "https", logger: logger)
        publicCertificates = try config.tls.map { try CertificateStore($0, logger: logger) }
        adminCertificates = try config.admin.tls.map { try CertificateStore($0, logger: logger) }
        authzCertificates = config.authz.listen == nil ? nil : try config.authz.tls.map { try CertificateStore($0, logger: logger) }
    }

    /// Every listener's certificates: a reload and a changed file reload each.
    var certificates: [CertificateStore] {
        [publicCertificates, adminCertificates, authzCertificates].compactMap { $0 }
    }

    /// Watches the listeners' certificate files and reloads a certificate that changed.
    var certificateFileWatcher: CertificateFileWatcher {
        CertificateFileWatcher(stores: certificates)
    }

    /// The configured assertion keys (already checked by `GatewayConfig.load`), or an
    /// ephemeral one with a warning when none are configured.
    private static func makeAssertionSigner(config: GatewayConfig, logger: Logger) async throws -> AssertionSigner {
        var keys: [AssertionSigner.SigningKey] = []
        for (kid, pem) in config.secrets.assertionKeys {
            do {
                keys.append(.init(kid: kid, privateKey: try ES256PrivateKey(pem: pem.bytes)))
            } catch {
                throw ConfigError(key: "assertion.signing_keys", "key \"\(kid)\" is not a PEM P-256 private key")
            }
        }
        if keys.isEmpty {
            let key = try AssertionSigner.ephemeralKey()
            keys = [key]
            logger.warning(
                "assertion.signing_keys is empty: X-Gateway-Assertion is signed with an ephemeral key (kid \(key.kid)) that differs per instance and changes on restart; configure keys when running several instances"
            )
        }
        return try await AssertionSigner(
            keys: keys, issuer: config.tokens.issuer, timeToLive: config.assertion.ttl.duration.components.seconds
        )
    }

    /// With `redis.sentinel`, follows `+switch-master` so a failover moves the pool at once.
    func makeSentinelWatcher() -> RedisSentinelWatcher? {
        redisConfiguration.sentinel.map { RedisSentinelWatcher(configuration: redisConfiguration, sentinel: $0, logger: logger) }
    }

    /// Keeps every instance's caches honest: invalidation messages from `pg:invalidate`. Its
    /// state is also what readiness follows (``RedisReadiness``).
    ///
    /// On a reset the key cache starts over, while session revocations (which only ever
    /// grow) are re-read from Redis and merged, never dropped.
    func makeInvalidationSubscriber() -> RedisSubscriber {
        let verifier = keyVerifier
        let revocations = revocations
        let resets = Counter(label: "gateway_invalidation_resets_total")
        let messages = Counter(label: "gateway_invalidation_messages_total")
        let readiness = readiness
        let redis = redis
        let upgraded = upgraded
        return RedisSubscriber(
            configuration: redisConfiguration,
            channels: [KeyRegistry.invalidationChannel],
            logger: logger,
            onHealth: { subscribed in
                readiness.subscriptionChanged(up: subscribed)
                // Redis is back: a cluster's slot map is read again even with no traffic.
                if subscribed { redis.refreshSlotMap() }
            },
            onReset: {
                resets.increment()
                verifier.reset()
                revocations.reloadInBackground()
            },
            onMessage: { _, message in
                messages.increment()
                if message.hasPrefix("session ") || message.hasPrefix("user ") {
                    revocations.apply(message)
                } else {
                    verifier.invalidate(message)
                }
                // After the caches above: the connections named are checked against them.
                upgraded.invalidated(message)
            }
        )
    }
}
