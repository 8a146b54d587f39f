import ArgumentParser
import Foundation
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
        discussion: "Environment overrides: GATEWAY_LISTEN, GATEWAY_ADMIN_LISTEN, GATEWAY_REDIS_URL, GATEWAY_OTP_MODE. Secrets: GATEWAY_ADMIN_TOKEN, each signing key's secret_env (GATEWAY_JWT_SECRET by default) and users.phone_key_env (GATEWAY_PHONE_KEY by default)."
    )

    @Option(help: "The YAML configuration file (defaults apply when omitted).")
    var config: String?

    @Flag(help: "Check the configuration and exit.")
    var checkConfig = false

    /// Runs Swift concurrency's tasks on SwiftNIO's event loops before anything else starts.
    ///
    /// Without this every request hops between NIO's threads (socket I/O) and Swift's
    /// cooperative pool (the handlers) several times, and on a 2-core machine each hop is a
    /// thread wake-up: measured, the hops cost more CPU than the proxying itself. With NIO's
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
        let settings: GatewayConfig
        do {
            settings = try GatewayConfig.load(path: config, environment: ProcessInfo.processInfo.environment)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(2)
        }
        if checkConfig {
            print("configuration ok")
            return
        }
        try await Gateway.run(settings)
    }
}
