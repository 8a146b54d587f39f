import ArgumentParser
import Foundation
import GatewayConfiguration
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// `PartnerGateway --config PATH`: loads the configuration, then hands off to
/// ``buildApplication(_:logger:)`` and runs it until SIGTERM or SIGINT.
@main
struct App: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "PartnerGateway",
        abstract: "API gateway and API-key broker for partners and drivers' apps.",
        discussion: "Environment overrides: GATEWAY_LISTEN, GATEWAY_ADMIN_LISTEN, GATEWAY_REDIS_URL, GATEWAY_OTP_MODE. Secrets: GATEWAY_ADMIN_TOKEN, each signing key's secret_env (GATEWAY_JWT_SECRET by default) and users.phone_key_env (GATEWAY_PHONE_KEY by default). SIGHUP reloads the configuration file (docs/operations.md).",
        version: BuildInfo.summary
    )

    @Option(help: "The YAML configuration file (defaults apply when omitted).")
    var config: String?

    @Flag(help: "Check the configuration and exit: every problem is printed, secrets that are not set are listed but allowed.")
    var checkConfig = false

    @Flag(help: "With --check-config: secrets that are not set are errors too, as they are at start-up.")
    var strict = false

    /// Runs Swift concurrency's tasks on SwiftNIO's event loops before anything else starts.
    ///
    /// Without this every request hops between NIO's threads (socket I/O) and Swift's
    /// cooperative pool (the handlers) several times, and on a 2-core machine each hop is a
    /// thread wake-up, which costs more CPU than the proxying itself. With NIO's
    /// loops as the global executor a task keeps running on the loop that woke it. Nothing in
    /// the gateway blocks a thread (Redis and upstream I/O are NIO channels), which is what
    /// this requires.
    ///
    /// The number of loops (`server.event_loops`) must be known before that, so the
    /// configuration is read once here already; ``run()`` reads it again and reports errors.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if let app = command as? App,
               let loops = try? GatewayConfig.load(path: app.config, environment: ProcessInfo.processInfo.environment).server.eventLoops {
                NIOSingletons.groupLoopCountSuggestion = loops
            }
            NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }

    func run() async throws {
        let result = GatewayConfig.check(path: config, environment: ProcessInfo.processInfo.environment)
        // Secrets that are not set stop a start, and a strict check; a plain check lists them.
        let secretsRequired = !checkConfig || strict
        let failures = result.errors + (secretsRequired ? result.missingSecrets : [])
        if !failures.isEmpty {
            FileHandle.standardError.write(Data(failures.map { "\($0)\n" }.joined().utf8))
            throw ExitCode(2)
        }
        if checkConfig {
            for missing in result.missingSecrets {
                print("note: \(missing.key): \(missing.problem) (required to start; --strict makes this an error)")
            }
            print("configuration ok")
            return
        }
        try await Gateway.run(result.config, path: config)
    }
}
