import GatewayAdmission
import GatewayConfiguration
import GatewayEndpoints
import GatewayObservability
import GatewayProxy
import GatewayServer
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// Builds the whole gateway from one configuration value: the public listener, the admin
/// listener, the authorization listener when `authz.listen` is set, and everything they share.
/// `PartnerGateway` runs what this returns, and the tests build the very same application.
///
/// Shutdown order follows the services list in reverse: the public listener drains first, then
/// the authorization and admin listeners, the invalidation subscriber and finally the Redis pool.
///
/// `accessLog` receives every listener's access lines (it knows whether `log.access_log` is on);
/// the caller owns it and shuts it down after the application has stopped. `reloader`, when
/// given, is handed what a configuration reload replaces.
func buildApplication(
    _ config: GatewayConfig, logger: Logger, accessLog: AccessLogWriter? = nil, reloader: ConfigReloader? = nil
) async throws -> some ApplicationProtocol {
    GatewayMetrics.bootstrap()
    BuildInfo.export()
    let dependencies = try await GatewayDependencies(config: config, logger: logger, accessLog: accessLog)
    reloader?.attach(routes: dependencies.routes, policies: dependencies.policies, certificates: dependencies.certificates)
    let adminEndpoints = Endpoints(router: buildAdminRouter(dependencies), logger: logger)
    let admin = Application(
        responder: adminEndpoints.responder,
        // The same client protections as the public listener: malformed requests and oversized
        // heads are answered in the gateway's error shape, slow heads are cut off.
        server: .gateway(config.server, endpoints: adminEndpoints, certificates: dependencies.adminCertificates),
        configuration: .init(address: .hostname(config.admin.listen.host, port: config.admin.listen.port), serverName: nil),
        logger: logger
    )
    let proxy = ProxyEngine(
        routes: dependencies.routes,
        clientAddress: dependencies.clientAddress,
        apiKeys: dependencies.apiKeys,
        bearer: dependencies.bearer,
        assertions: dependencies.assertions,
        policies: dependencies.policies,
        rateLimits: dependencies.rateLimitGate,
        maxBodyBytes: config.maxBodyBytes,
        accessLog: dependencies.accessLog,
        tracing: dependencies.tracing,
        logger: dependencies.logger,
        idempotency: IdempotencyStore(redis: dependencies.redis, secrets: IdempotencySecrets(derivingFrom: config.secrets.phoneKey.bytes)),
        cors: CORSPolicy(config.web),
        upgraded: dependencies.upgraded
    )
    // After the Redis pool in the list, so it stops (and flushes the last counts) before it.
    let usageFlush: [any Service] = dependencies.usage.map { [UsageFlushService(counter: $0)] } ?? []
    let authz: [any Service] = config.authz.listen.map { [buildAuthzListener(dependencies, engine: proxy, at: $0)] } ?? []
    // The span exporter first: it stops last, after the listeners drained, and sends the
    // last spans then.
    let services: [any Service] = (dependencies.tracing.map { [$0.service] } ?? []) + [dependencies.redis] + usageFlush
        + [dependencies.makeInvalidationSubscriber()]
        + (dependencies.makeSentinelWatcher().map { [$0] } ?? []) + [admin] + authz + [dependencies.certificateFileWatcher]
        + [UpstreamHealthChecks(routes: dependencies.routes, logger: dependencies.logger)]
        + [UpstreamResolver(routes: dependencies.routes, interval: config.server.upstreamDNSRefresh.duration, logger: dependencies.logger)]
    let publicEndpoints = Endpoints(router: buildPublicRouter(dependencies), logger: logger)
    return Application(
        responder: publicEndpoints.responder,
        server: .gateway(config.server, endpoints: publicEndpoints, proxy: proxy, certificates: dependencies.publicCertificates),
        configuration: .init(
            address: .hostname(config.listen.host, port: config.listen.port), serverName: nil, backlog: publicListenBacklog
        ),
        services: services,
        onServerRunning: { channel in
            // Accepting only NIO's default 4 connections per wake-up, a thousand clients
            // connecting at once waited up to two seconds behind the requests of those already in.
            try? await channel.setOption(ChannelOptions.maxMessagesPerRead, value: acceptsPerWakeUp)
        },
        logger: logger
    )
}

/// The authorization listener (`authz.listen`): `/forward` answered by a ``ForwardAuthorizer``
/// over the public listener's proxy engine (its routes and admission), the verify API and
/// `/healthz` by its router.
private func buildAuthzListener(_ dependencies: GatewayDependencies, engine: ProxyEngine, at address: ListenAddress) -> some Service {
    let endpoints = Endpoints(router: buildAuthzRouter(dependencies, engine: engine), logger: dependencies.logger)
    return Application(
        responder: endpoints.responder,
        server: .gateway(
            dependencies.config.server, endpoints: endpoints, authorizer: ForwardAuthorizer(engine: engine),
            certificates: dependencies.authzCertificates
        ),
        configuration: .init(address: .hostname(address.host, port: address.port), serverName: nil, backlog: publicListenBacklog),
        logger: dependencies.logger
    )
}

/// The public listener's accept queue: Hummingbird's default (256) is below what a storm of
/// reconnecting apps brings at once, and a full queue makes Linux drop handshakes that clients
/// retry only a second later. The kernel caps it at `net.core.somaxconn` (4096 by default).
let publicListenBacklog = 4096

/// How many connections the public listener accepts each time its socket is readable.
let acceptsPerWakeUp: UInt = 256
