import ArgumentParser
import GatewayContract

extension Gatewayctl.Users {
    struct Find: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the user a phone number belongs to: id, created, live sessions."
        )

        @Option(help: ArgumentHelp("A 10-digit Indian mobile number (+91 or 91 in front is fine).", valueName: "phone"), transform: Identifier.parse)
        var phone: String

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try global.printer.show(try await global.client().findUser(phone: phone))
        }
    }
}
