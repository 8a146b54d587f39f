import AsyncHTTPClient
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import RedisClient
import ServiceLifecycle

/// Builds the whole gateway from one configuration value: the public listener, the admin
/// listener and everything they share. `PartnerGateway` runs what this returns, and the tests
/// build the very same application.
///
/// Shutdown order follows the services list in reverse: the public listener drains first, then
/// the admin listener, then the upstream HTTP client and finally the Redis pool.
func buildApplication(_ config: GatewayConfig, logger: Logger) async throws -> some ApplicationProtocol {
    GatewayMetrics.bootstrap()
    let redisURL = try RedisURL(config.redis.url)
    var redisLogger = logger
    redisLogger[metadataKey: "component"] = "redis"
    let redis = RedisConnectionPool(
        configuration: RedisConfiguration(url: redisURL, poolSize: config.redis.poolSize, timeout: config.redis.timeout.duration),
        logger: redisLogger
    )
    let upstreams = UpstreamClient()

    let admin = Application(
        router: buildAdminRouter(config, redis: redis, logger: logger),
        server: .http1(configuration: .init(idleTimeout: TimeAmount(config.server.idleTimeout.duration))),
        configuration: .init(address: .hostname(config.admin.listen.host, port: config.admin.listen.port), serverName: nil),
        logger: logger
    )
    return Application(
        router: buildPublicRouter(config, redis: redis, httpClient: upstreams.client, logger: logger),
        server: .http1(configuration: .init(idleTimeout: TimeAmount(config.server.idleTimeout.duration))),
        configuration: .init(address: .hostname(config.listen.host, port: config.listen.port), serverName: nil),
        services: [redis, upstreams, admin],
        logger: logger
    )
}

func buildPublicRouter(_ config: GatewayConfig, redis: RedisConnectionPool, httpClient: HTTPClient, logger: Logger) -> Router<GatewayRequestContext> {
    let router = Router(context: GatewayRequestContext.self)
    router.addMiddleware {
        RequestIDMiddleware()
        MetricsMiddleware<GatewayRequestContext>(listener: "public")
        if config.log.accessLog {
            AccessLogMiddleware(logger: Logger(label: "access"))
        }
        ErrorMiddleware<GatewayRequestContext>()
        ProxyMiddleware(
            routes: RouteTable(config.routes),
            httpClient: httpClient,
            clientAddress: ClientAddress(trustedProxies: config.trustedProxies),
            maxBodyBytes: config.maxBodyBytes,
            logger: logger
        )
    }
    HealthController<GatewayRequestContext>(redis: redis).addRoutes(to: router)
    return router
}

func buildAdminRouter(_ config: GatewayConfig, redis: RedisConnectionPool, logger: Logger) -> Router<GatewayRequestContext> {
    let router = Router(context: GatewayRequestContext.self)
    router.addMiddleware {
        RequestIDMiddleware()
        MetricsMiddleware<GatewayRequestContext>(listener: "admin")
        if config.log.accessLog {
            AccessLogMiddleware(logger: Logger(label: "admin-access"))
        }
        ErrorMiddleware<GatewayRequestContext>()
        AdminAuthMiddleware<GatewayRequestContext>(token: config.secrets.adminToken)
    }
    MetricsController<GatewayRequestContext>().addRoutes(to: router)
    router.get("/healthz") { _, _ in StatusBody(status: "ok") }
    return router
}
