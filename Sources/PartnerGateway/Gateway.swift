import ArgumentParser
import GatewayConfiguration
import GatewayObservability
import Hummingbird
import Logging
import RedisClient
import ServiceLifecycle
import UnixSignals

/// Runs a built gateway as a process: logging, signals and the drain on shutdown.
enum Gateway {
    /// `path` is the configuration file, read again on SIGHUP (``ConfigReloader``).
    static func run(_ config: GatewayConfig, path: String?) async throws {
        let levels = GatewayLogging.bootstrap(config.log)
        let logger = Logger(label: "partner-gateway")
        try ListenerPreflight.check(config, logger: logger)
        try await checkEvictionPolicy(config, logger: logger)
        GatewayMetrics.bootstrap()  // Before anything makes a metric handle.
        BuildInfo.export()
        let accessLog = AccessLogWriter(format: config.log.format, enabled: config.log.accessLog)
        // After the drain, so the last requests' lines are written too.
        defer { accessLog.shutdown() }
        let reloader = ConfigReloader(path: path, running: config, levels: levels, accessLog: accessLog, logger: logger)
        let readiness = ReadinessNotice(listeners: config.authz.listen == nil ? 2 : 3, logger: logger)
        let app = try await buildApplication(config, logger: logger, accessLog: accessLog, reloader: reloader, readiness: readiness)

        // SIGTERM/SIGINT start a graceful shutdown: the listeners drain (GatewayListener),
        // in-flight requests get `server.drain_timeout` to finish, then Redis and the HTTP
        // client close. SIGHUP reloads the configuration file. The notice last: it stops
        // first, saying so to a supervisor at once.
        var group = ServiceGroupConfiguration(
            services: [.init(service: app), .init(service: reloader), .init(service: readiness)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        group.maximumGracefulShutdownDuration = config.server.drainTimeout.duration
        group.maximumCancellationDuration = .seconds(5)
        try await ServiceGroup(configuration: group).run()
        logger.info("stopped")
    }

    /// Runs ``RedisEvictionPolicyCheck`` on a connection of its own (closed before serving);
    /// a wrong policy, a refused certificate or refused credentials end the process with one
    /// critical log line and exit status 1.
    private static func checkEvictionPolicy(_ config: GatewayConfig, logger: Logger) async throws {
        var configuration = config.secrets.redis
        configuration.poolSize = 1
        let redis = RedisConnectionPool(configuration: configuration, logger: logger)
        defer { redis.shutdown() }
        do {
            try await RedisEvictionPolicyCheck(redis: redis, logger: logger).run()
        } catch let error as RedisEvictionPolicyCheck.Refusal {
            logger.critical("\(error)")
            throw ExitCode(1)
        }
    }
}
