import Foundation

/// A `PartnerGateway` process started from a YAML text, with its own free ports.
public final class GatewayProcess: @unchecked Sendable {
    // @unchecked: immutable after init except `process`, which only the owning test touches.
    public static let adminToken = "test-admin-token-0123456789abcdef"
    public static let jwtSecret = "test-jwt-secret-0123456789abcdef0123456789"
    public static let phoneKey = "test-phone-key-0123456789abcdef0123456789"
    public static let smsWebhookSecret = "test-sms-webhook-secret-0123456789abcdef"
    /// `redis.timeout` of the gateways tests start, unless a test of Redis faults sets less:
    /// long enough that a reply slowed by a machine busy with parallel suites is not a 503.
    public static let redisTimeout = "5s"

    public let port: Int
    public let adminPort: Int
    /// The authorization listener's port (`authz.listen`), when the gateway was started with one.
    public let authzPort: Int?
    public let logPath: String
    /// The YAML file the gateway reads (again on SIGHUP).
    public let configPath: String
    public let process: ChildProcess
    /// Holds the configuration and the log; removed once the process is killed on deinit.
    private let folder: TemporaryFolder

    /// Starts the gateway with `yaml` (its `listen` and `admin.listen` are overridden with
    /// free ports through the environment, and with `authz` its `authz.listen` too) and waits
    /// until it accepts connections.
    public init(yaml: String, environment extra: [String: String] = [:], authz: Bool = false, waitUntilListening: Bool = true) async throws {
        port = LoopbackPort.free()
        adminPort = LoopbackPort.free()
        authzPort = authz ? LoopbackPort.free() : nil
        folder = try TemporaryFolder("pg-gateway")
        configPath = folder.path("gateway.yaml")
        try yaml.write(toFile: configPath, atomically: true, encoding: .utf8)
        logPath = folder.path("gateway.log")
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("GATEWAY_") }
        environment["GATEWAY_LISTEN"] = "127.0.0.1:\(port)"
        environment["GATEWAY_ADMIN_LISTEN"] = "127.0.0.1:\(adminPort)"
        if let authzPort { environment["GATEWAY_AUTHZ_LISTEN"] = "127.0.0.1:\(authzPort)" }
        environment["GATEWAY_ADMIN_TOKEN"] = Self.adminToken
        environment["GATEWAY_JWT_SECRET"] = Self.jwtSecret
        environment["GATEWAY_PHONE_KEY"] = Self.phoneKey
        environment["GATEWAY_SMS_WEBHOOK_SECRET"] = Self.smsWebhookSecret
        environment.merge(extra) { $1 }
        process = try ChildProcess(BuiltProduct.path("PartnerGateway"), ["--config", configPath], environment: environment, outputPath: logPath)
        if waitUntilListening {
            let process = self.process
            // Both listeners: the gateway binds them one after the other, and a test that
            // calls the admin API as soon as the public port answers would find it closed.
            let ports = (extra["GATEWAY_ADMIN_LISTEN"] == nil ? [port, adminPort] : [port]) + (authzPort.map { [$0] } ?? [])
            try await eventually(timeout: .seconds(20)) {
                guard process.isRunning else { throw GatewayExited(log: (try? String(contentsOfFile: self.logPath, encoding: .utf8)) ?? "") }
                return ports.allSatisfy(LoopbackPort.isAccepting)
            }
        }
    }

    deinit {
        process.kill9()
    }

    /// SIGTERM and wait for the graceful exit.
    public func stop() async {
        await process.stop()
    }

    /// SIGKILL and reap: immediate, safe in a `defer`.
    public func kill() {
        process.kill9()
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }
    public var adminURL: String { "http://127.0.0.1:\(adminPort)" }
    /// The authorization listener's base URL (the gateway must have been started with `authz`).
    public var authzURL: String { "http://127.0.0.1:\(authzPort ?? 0)" }

    public var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }
}

public struct GatewayExited: FinalFailure, CustomStringConvertible {
    public let log: String
    public var description: String { "the gateway exited during start-up:\n\(log)" }
}
