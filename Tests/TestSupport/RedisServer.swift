import Foundation

/// A private `redis-server` on a free loopback port, started and stopped by a test.
///
/// Its data lives in a fresh temporary folder; `restart()` brings it back on the same port
/// and folder, so persistence and reconnection can be tested against the real thing.
public final class RedisServer: @unchecked Sendable {
    // @unchecked: `process` is only touched under `lock`.
    public let port: Int
    public var directory: URL { folder.url }
    private let folder: TemporaryFolder
    public let appendOnly: Bool
    /// Set when the server speaks only TLS (`--tls-port`, no plain port).
    public let certificates: RedisTestCertificates?
    private let extraArguments: [String]
    private let lock = NSLock()
    private var process: ChildProcess?

    public var url: String { "\(certificates == nil ? "redis" : "rediss")://127.0.0.1:\(port)/0" }

    /// - Parameters:
    ///   - tls: serve only TLS with these certificates; clients may present one signed by
    ///     their CA, and must when `requireClientCertificate`.
    public init(
        appendOnly: Bool = false,
        tls certificates: RedisTestCertificates? = nil,
        requireClientCertificate: Bool = false,
        extraArguments: [String] = []
    ) async throws {
        self.port = LoopbackPort.free()
        self.folder = try TemporaryFolder("pg-redis-\(port)")
        self.appendOnly = appendOnly
        self.certificates = certificates
        var tlsArguments: [String] = []
        if let certificates {
            tlsArguments = [
                "--port", "0", "--tls-port", String(port),
                "--tls-cert-file", certificates.serverCertificate, "--tls-key-file", certificates.serverKey,
                "--tls-ca-cert-file", certificates.caFile,
                "--tls-auth-clients", requireClientCertificate ? "yes" : "optional",
            ]
        }
        self.extraArguments = tlsArguments + extraArguments
        try await start()
    }

    deinit {
        takeProcess()?.kill9()
    }

    /// Starts the server and returns once it accepts connections.
    public func start() async throws {
        let process = try ChildProcess(try Self.executable(), [
            "--port", String(port), "--bind", "127.0.0.1", "--dir", directory.path,
            "--save", "", "--appendonly", appendOnly ? "yes" : "no", "--appendfsync", "always",
            "--daemonize", "no", "--logfile", directory.appendingPathComponent("redis.log").path,
            "--maxmemory-policy", "noeviction",
        ] + extraArguments)
        lock.withLock { self.process = process }
        let port = self.port
        try await eventually(timeout: .seconds(10), interval: .milliseconds(5)) {
            guard process.isRunning else { throw RedisServerExited() }
            return LoopbackPort.isAccepting(port)
        }
    }

    /// Stops the server (SIGTERM, which lets it finish its AOF) and waits for it to exit.
    public func stop() async {
        await takeProcess()?.stop()
    }

    /// Kills the server with SIGKILL: no chance to flush anything.
    public func kill() {
        takeProcess()?.kill9()
    }

    /// Stops answering without closing connections (SIGSTOP), until `resume()`.
    public func freeze() {
        lock.withLock { process }?.signal(SIGSTOP)
    }

    public func resume() {
        lock.withLock { process }?.signal(SIGCONT)
    }

    public func restart() async throws {
        await stop()
        try await start()
    }

    private func takeProcess() -> ChildProcess? {
        lock.withLock {
            defer { process = nil }
            return process
        }
    }

    /// Runs `redis-cli` against this server and returns what it printed.
    @discardableResult
    public func cli(_ arguments: String...) async throws -> String {
        try await cli(arguments: arguments)
    }

    @discardableResult
    public func cli(arguments: [String]) async throws -> String {
        var options = ["-p", String(port)]
        if let certificates {
            options += ["--tls", "--cacert", certificates.caFile, "--cert", certificates.clientCertificate, "--key", certificates.clientKey]
        }
        let result = try await ShortCommand.run("/usr/bin/redis-cli", options + arguments)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func executable() throws -> String {
        for candidate in ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw RedisServerMissing()
    }
}

public struct RedisServerExited: FinalFailure, CustomStringConvertible {
    public var description: String { "redis-server exited during start-up" }
}

public struct RedisServerMissing: Error, CustomStringConvertible {
    public var description: String { "redis-server is not installed (run scripts/install-deps.sh)" }
}
