import AsyncHTTPClient
import KeyRegistry
import Logging
import RateLimit
import RedisClient

/// Everything the listeners share, built once from the configuration.
struct GatewayDependencies: Sendable {
    let config: GatewayConfig
    let logger: Logger
    let redis: RedisConnectionPool
    let redisConfiguration: RedisConfiguration
    let limiter: any RateLimiter
    let registry: KeyRegistry
    let keyVerifier: KeyVerifier
    let auditLog: AuditLog
    let clientAddress: ClientAddress
    let apiKeys: APIKeyAuthenticator
    let policies: RateLimitPolicies
    let rateLimitGate: RateLimitGate
    let upstreams: HTTPClient

    init(config: GatewayConfig, logger: Logger) throws {
        self.config = config
        self.logger = logger
        redisConfiguration = RedisConfiguration(
            url: try RedisURL(config.redis.url),
            poolSize: config.redis.poolSize,
            timeout: config.redis.timeout.duration
        )
        var redisLogger = logger
        redisLogger[metadataKey: "component"] = "redis"
        redis = RedisConnectionPool(configuration: redisConfiguration, logger: redisLogger)
        limiter = RedisRateLimiter(redis: redis)
        registry = KeyRegistry(redis: redis)
        keyVerifier = KeyVerifier(registry: registry, logger: logger)
        auditLog = AuditLog(redis: redis)
        clientAddress = ClientAddress(trustedProxies: config.trustedProxies)
        policies = RateLimitPolicies(limits: config.rateLimits)
        rateLimitGate = RateLimitGate(limiter: limiter, logger: logger)
        apiKeys = APIKeyAuthenticator(verifier: keyVerifier, limiter: limiter, policies: policies)
        upstreams = UpstreamClient.shared
    }

    /// Keeps every instance's caches honest: invalidation messages from `pg:invalidate`.
    func makeInvalidationSubscriber() -> RedisSubscriber {
        let verifier = keyVerifier
        return RedisSubscriber(
            configuration: redisConfiguration,
            channels: [KeyRegistry.invalidationChannel],
            logger: logger,
            onReset: { verifier.reset() },
            onMessage: { _, message in verifier.invalidate(message) }
        )
    }
}
