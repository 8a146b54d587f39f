import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import TestSupport

/// The built `PartnerGateway` binary as a real process: start-up errors, readiness, shutdown.
@Suite("PartnerGateway process", .realProcesses)
struct GatewayProcessTests {
    private func yaml(redis: RedisServer, upstream: EchoUpstreamProcess? = nil, redisTimeout: String = GatewayProcess.redisTimeout) -> String {
        var text = """
        redis:
          url: \(redis.url)
          timeout: \(redisTimeout)
        otp:
          mode: uat
        server:
          drain_timeout: 10s
        """
        if let upstream {
            text += "\nroutes:\n  - {name: echo, path_prefix: /echo, upstream: \(upstream.url), auth: none, timeout: 10s}\n"
        }
        return text
    }

    /// Bad configurations stop start-up with one line per problem that names the key, and
    /// exit non-zero (each of these files has one problem).
    @Test(arguments: [
        ("unknown: 1\notp:\n  mode: uat\n", [String: String](), "config error: unknown: unknown key"),
        ("tokens:\n  access_ttl: ten\notp:\n  mode: uat\n", [:], "config error: tokens.access_ttl:"),
        ("otp:\n  mode: uat\n", ["GATEWAY_JWT_SECRET": ""], "config error: GATEWAY_JWT_SECRET:"),
    ])
    func badConfigurationsExitWithOneLine(yaml: String, environment: [String: String], expected: String) async throws {
        let gateway = try await GatewayProcess(yaml: yaml, environment: environment, waitUntilListening: false)
        let code = try await gateway.process.waitForExit(timeout: .seconds(20))
        #expect(code != 0)
        let lines = gateway.log.split(separator: "\n")
        #expect(lines.count == 1, "\(gateway.log)")
        #expect(lines.first?.hasPrefix(expected) == true, "\(gateway.log)")
    }

    @Test func readyzTracksRedisWithoutARestart() async throws {
        let redis = try await RedisServer(appendOnly: true)
        let gateway = try await GatewayProcess(yaml: yaml(redis: redis, redisTimeout: "250ms"))
        let http = HTTPClient.shared
        func status(_ path: String) async throws -> UInt {
            try await http.execute(HTTPClientRequest(url: gateway.baseURL + path), timeout: .seconds(5)).status.code
        }
        #expect(try await status("/healthz") == 200)
        #expect(try await status("/readyz") == 200)

        await redis.stop()
        let down = try await eventually(timeout: .seconds(2)) { try await status("/readyz") == 503 }
        print("readyz turned 503 \(down) after redis stopped")
        #expect(try await status("/healthz") == 200)

        try await redis.start()
        let up = try await eventually(timeout: .seconds(2)) { try await status("/readyz") == 200 }
        print("readyz turned 200 \(up) after redis started")
        #expect(gateway.process.isRunning)
    }

    @Test func sigtermLetsAnInFlightRequestFinish() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: yaml(redis: redis, upstream: upstream))
        let http = HTTPClient.shared

        let clock = ContinuousClock()
        let started = clock.now
        async let slow = http.execute(HTTPClientRequest(url: gateway.baseURL + "/echo/slow?delay_ms=5000"), timeout: .seconds(30))
        // Wait until the request has gone through the gateway and reached the upstream.
        try await eventually(timeout: .seconds(5)) { upstream.log.contains("received GET /echo/slow") }
        gateway.process.signal(SIGTERM)
        // Without reuse_port the listener closes first: a new connection is refused while the
        // request in flight (which keeps the process running) is still being answered.
        try await eventually(timeout: .seconds(4)) { !LoopbackPort.isAccepting(gateway.port) }
        #expect(gateway.process.isRunning, "the gateway exited before the request in flight was answered")

        let response = try await slow
        #expect(response.status.code == 200)
        let body = try await response.body.collect(upTo: 1 << 20)
        #expect(String(buffer: body).contains(#""path":"\/echo\/slow""#))
        let code = try await gateway.process.waitForExit(timeout: .seconds(15))
        #expect(code == 0, "\(gateway.log)")
        #expect(clock.now - started >= .seconds(5))
        // Once it has stopped, nothing listens any more.
        #expect(!LoopbackPort.isAccepting(gateway.port))
    }

    /// `server.reuse_port`: a second gateway starts on the same ports and says it is ready, but
    /// new connections keep going to the first one until it drains; then to the second.
    /// Without the key, the second is refused with one line naming the address.
    @Test func reusePortLetsASecondGatewayTakeOver() async throws {
        let redis = try await RedisServer()
        let yaml = self.yaml(redis: redis) + "\n  reuse_port: true\n"
        let first = try await GatewayProcess(yaml: yaml)
        let ports = ["GATEWAY_LISTEN": "127.0.0.1:\(first.port)", "GATEWAY_ADMIN_LISTEN": "127.0.0.1:\(first.adminPort)"]
        let second = try await GatewayProcess(yaml: yaml, environment: ports, waitUntilListening: false)
        try await eventually(timeout: .seconds(20)) { second.log.contains(#""msg":"ready""#) }
        let http = HTTPClient.shared
        // A new connection each: the kernel would spread them over both listeners by its hash.
        func healthz() async throws {
            var request = HTTPClientRequest(url: first.baseURL + "/healthz")
            request.headers.add(name: "Connection", value: "close")
            let response = try await http.execute(request, timeout: .seconds(5))
            #expect(response.status.code == 200)
            _ = try await response.body.collect(upTo: 1 << 16)
        }
        func answered(_ gateway: GatewayProcess) -> Int {
            gateway.log.components(separatedBy: #""route":"/healthz""#).count - 1
        }
        for _ in 0..<10 { try await healthz() }
        try await eventually(timeout: .seconds(5)) { answered(first) == 10 }
        #expect(answered(second) == 0, "the new gateway took connections before the running one drained")

        first.process.signal(SIGTERM)
        #expect(try await first.process.waitForExit(timeout: .seconds(15)) == 0, "\(first.log)")
        for _ in 0..<10 { try await healthz() }
        try await eventually(timeout: .seconds(5)) { answered(second) == 10 }

        let refused = try await GatewayProcess(yaml: self.yaml(redis: redis), environment: ports, waitUntilListening: false)
        #expect(try await refused.process.waitForExit(timeout: .seconds(20)) == 1)
        #expect(refused.log.contains("cannot listen on 127.0.0.1:\(first.port): the address is already in use"), "\(refused.log)")
        await second.stop()
    }
}

extension GatewayProcessTests {
    /// `server.event_loops` sets how many SwiftNIO event-loop threads serve the gateway
    /// (without it there is one per core, as NIO counts them, cgroup limits included).
    @Test(arguments: [1, 3])
    func eventLoopsSetsTheNumberOfLoopThreads(configured: Int) async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: """
            redis:
              url: \(redis.url)
              timeout: \(GatewayProcess.redisTimeout)
            otp:
              mode: uat
            server:
              event_loops: \(configured)
            """)
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(gateway.process.pid)/task")
        let names = tasks.map { task in
            (try? String(contentsOfFile: "/proc/\(gateway.process.pid)/task/\(task)/comm", encoding: .utf8)) ?? ""
        }
        // Each loop thread has its own name (NIO-SGLTN-0-#0, #1, ...). Distinct names are
        // counted: a thread a loop thread starts carries its name until it sets its own.
        let loops = Set(names.filter { $0.hasPrefix("NIO-SGLTN-") })
        #expect(loops.count == configured, "NIO loop threads: \(loops.sorted())")
    }
}

extension GatewayProcessTests {
    /// `--check-config` reads a file where the production secrets are not set: each missing
    /// secret is listed, the exit status is 0; `--strict` makes them errors. Every problem of
    /// a bad file is reported in one run, YAML syntax errors with their line and column.
    @Test func checkConfigWithoutSecrets() async throws {
        let folder = try TemporaryFolder("pg-check")
        defer { withExtendedLifetime(folder) {} }
        let directory = folder.url
        func check(_ yaml: String, _ arguments: [String] = []) async throws -> ShortCommandResult {
            let path = directory.appendingPathComponent("gateway.yaml").path
            try yaml.write(toFile: path, atomically: true, encoding: .utf8)
            return try await ShortCommand.run(BuiltProduct.path("PartnerGateway"), ["--config", path, "--check-config"] + arguments, environment: [:])
        }

        let lint = try await check("otp: {mode: uat}\n")
        #expect(lint.status == 0, "\(lint.stderr)")
        #expect(lint.stdout.contains("note: GATEWAY_JWT_SECRET: is not set"), "\(lint.stdout)")
        #expect(lint.stdout.contains("configuration ok"))

        let strict = try await check("otp: {mode: uat}\n", ["--strict"])
        #expect(strict.status == 2)
        #expect(strict.stderr.contains("config error: GATEWAY_ADMIN_TOKEN: is not set"), "\(strict.stderr)")

        let many = try await check("colour: red\nredis: {timeout: soon}\nroutes:\n  - {name: a, path_prefix: x, upstream: http://y, auth: none}\nserver: {event_loops: 0}\notp: {mode: uat}\n")
        #expect(many.status == 2)
        let lines = many.stderr.split(separator: "\n")
        #expect(lines.count == 4, "\(many.stderr)")
        for key in ["colour: unknown key", "redis.timeout:", "routes[0].path_prefix:", "server.event_loops:"] {
            #expect(many.stderr.contains(key), "\(key) missing from \(many.stderr)")
        }

        let syntax = try await check("otp:\n  mode: uat\n   ttl: 5m\n")
        #expect(syntax.status == 2)
        #expect(syntax.stderr.contains("line 3, column"), "\(syntax.stderr)")
        #expect(syntax.stderr.split(separator: "\n").count == 1, "\(syntax.stderr)")
    }

    @Test func versionOfBothBinaries() async throws {
        let gateway = try await ShortCommand.run(BuiltProduct.path("PartnerGateway"), ["--version"])
        #expect(gateway.status == 0)
        #expect(gateway.stdout.hasPrefix("PartnerGateway 1."), "\(gateway.stdout)")
        let ctl = try await ShortCommand.run(BuiltProduct.path("gatewayctl"), ["--version"])
        #expect(ctl.status == 0)
        #expect(ctl.stdout.hasPrefix("gatewayctl 1."), "\(ctl.stdout)")
        // One release number for both, and both name the commit they were built from.
        let release = { (text: String) in text.split(separator: " ").dropFirst().first.map(String.init) }
        #expect(release(gateway.stdout) == release(ctl.stdout))
        #expect(gateway.stdout.contains("(commit ") && ctl.stdout.contains("(commit "))
    }

    /// A port already in use stops start-up with one line naming the address and the key.
    @Test func bindFailureNamesTheAddress() async throws {
        let redis = try await RedisServer()
        let holder = try await GatewayProcess(yaml: yaml(redis: redis))
        let second = try await GatewayProcess(
            yaml: yaml(redis: redis), environment: ["GATEWAY_LISTEN": "127.0.0.1:\(holder.port)"], waitUntilListening: false
        )
        let code = try await second.process.waitForExit(timeout: .seconds(20))
        #expect(code == 1)
        let critical = second.log.split(separator: "\n").filter { $0.contains("\"critical\"") }
        #expect(critical.count == 1, "\(second.log)")
        #expect(critical.first?.contains("cannot listen on 127.0.0.1:\(holder.port): the address is already in use") == true, "\(second.log)")
        #expect(critical.first?.contains("GATEWAY_LISTEN") == true)
    }
}
