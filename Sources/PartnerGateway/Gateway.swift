import ArgumentParser
import Hummingbird
import Logging
import RedisClient
import ServiceLifecycle
import UnixSignals

/// Runs a built gateway as a process: logging, signals and the drain on shutdown.
enum Gateway {
    static func run(_ config: GatewayConfig) async throws {
        let level = Logger.Level(rawValue: config.log.level.rawValue) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "partner-gateway")
        try await checkEvictionPolicy(config, logger: logger)
        let app = try await buildApplication(config, logger: logger)

        // SIGTERM/SIGINT start a graceful shutdown: the listeners stop accepting, in-flight
        // requests get `server.drain_timeout` to finish, then Redis and the HTTP client close.
        var group = ServiceGroupConfiguration(
            services: [.init(service: app)],
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
