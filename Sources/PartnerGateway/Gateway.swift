import Hummingbird
import Logging
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
}
