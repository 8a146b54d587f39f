import Foundation
import GatewayAdmission
import GatewayConfiguration
import GatewayEdge
import GatewayObservability
import GatewayProxy
import Logging
import Metrics
import NIOPosix
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Reloads the configuration file on SIGHUP, as nginx does.
///
/// The new file is checked first, completely (``GatewayConfig/check(path:environment:)``): if
/// anything is wrong the running configuration stays, with one log line naming every problem
/// and `gateway_config_reloads_total{result="invalid"}`. Otherwise what can change without
/// dropping a connection changes at once: `routes`, `rate_limits`, and the `log` section.
/// Everything else (listeners, Redis, tokens, OTP, assertion keys, server timeouts, trusted
/// proxies, body limit, tracing, secrets) is built into connections and caches at start-up: a change
/// there is reported as needing a restart and not applied. Requests in flight keep the route
/// they matched and finish undisturbed.
final class ConfigReloader: Service, Sendable {
    private let path: String?
    private let logger: Logger
    private let levels: LogLevelSwitch
    private let accessLog: AccessLogWriter?
    private let running: Mutex<GatewayConfig>
    private let live: Mutex<(routes: RouteTable, policies: RateLimitPolicies, certificates: [CertificateStore])?>

    init(path: String?, running config: GatewayConfig, levels: LogLevelSwitch, accessLog: AccessLogWriter?, logger: Logger) {
        self.path = path
        self.logger = logger
        self.levels = levels
        self.accessLog = accessLog
        running = Mutex(config)
        live = Mutex(nil)
    }

    /// The parts of the running gateway a reload replaces or re-reads (``buildApplication``
    /// attaches them): the listeners' certificates are read again from their files.
    func attach(routes: RouteTable, policies: RateLimitPolicies, certificates: [CertificateStore]) {
        live.withLock { $0 = (routes, policies, certificates) }
    }

    /// Reloads on every SIGHUP until the gateway shuts down, on NIO's thread pool: reading and
    /// checking the file and certificates takes milliseconds, and Swift's tasks run on the
    /// event loops (``App/main()``), whose requests would wait meanwhile.
    ///
    /// The signal loop and the wait for shutdown race in a task group rather than through
    /// `cancelOnGracefulShutdown()`: that `merge` could deadlock its own lock against the task's
    /// when SIGINT's shutdown cancelled it, leaving the process running after Ctrl-C.
    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in await UnixSignalsSequence(trapping: .sighup) {
                    _ = try? await NIOThreadPool.singleton.runIfActive { self.reload() }
                }
            }
            group.addTask { try? await gracefulShutdown() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Reads, checks and applies the file once; whether it was applied.
    @discardableResult
    func reload(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        let result = GatewayConfig.check(path: path, environment: environment)
        let problems = result.errors + result.missingSecrets
        guard problems.isEmpty, let (routes, policies, certificates) = live.withLock({ $0 }) else {
            ConfigReloadMetrics.invalid.increment()
            logger.error("configuration reload refused; the running configuration stays", metadata: [
                "problems": .string(problems.map(\.description).joined(separator: "; ")),
            ])
            return false
        }
        let new = result.config
        let old = running.withLock { $0 }
        do {
            try routes.replace(with: new.routes)
        } catch {
            ConfigReloadMetrics.invalid.increment()
            logger.error("configuration reload refused; the running configuration stays", metadata: ["problems": "\(error)"])
            return false
        }
        // A certificate that does not load keeps the one in service, with its own log line.
        for store in certificates { _ = store.reload() }
        policies.replace(new.rateLimits)
        levels.level = Logger.Level(rawValue: new.log.level.rawValue) ?? .info
        accessLog?.setEnabled(new.log.accessLog)
        running.withLock { $0 = new }
        ConfigReloadMetrics.applied.increment()
        let needRestart = Self.restartOnlyChanges(from: old, to: new)
        var metadata: Logger.Metadata = ["routes": .stringConvertible(new.routes.count)]
        if !needRestart.isEmpty {
            metadata["not_applied"] = .string(needRestart.joined(separator: ", "))
        }
        logger.notice(needRestart.isEmpty ? "configuration reloaded" : "configuration reloaded; some changes need a restart", metadata: metadata)
        return true
    }

    /// The sections a reload does not apply that differ between `old` and `new`.
    static func restartOnlyChanges(from old: GatewayConfig, to new: GatewayConfig) -> [String] {
        // Compared by their printed form: these sections are plain values (secrets print
        // as <redacted>, which is why secrets are compared by the names they are read from).
        let sections: [(String, (GatewayConfig) -> Any)] = [
            ("listen", \.listen), ("admin", \.admin), ("authz", \.authz), ("redis", \.redis), ("tokens", \.tokens), ("otp", \.otp),
            ("users", \.users), ("trusted_proxies", \.trustedProxies), ("max_body_bytes", \.maxBodyBytes),
            ("assertion", \.assertion), ("server", \.server), ("log.format", \.log.format),
            ("tracing", \.tracing), ("web", \.web), ("portal", \.portal),
        ]
        return sections.filter { String(describing: $0.1(old)) != String(describing: $0.1(new)) }.map(\.0)
    }
}
