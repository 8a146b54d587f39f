import ArgumentParser
import Foundation
import Hummingbird
import Logging
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
