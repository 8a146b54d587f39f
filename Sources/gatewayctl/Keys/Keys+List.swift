import ArgumentParser
import GatewayContract

extension Gatewayctl.Keys {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a partner's keys, oldest first (never the key text itself)."
        )

        @Option(help: ArgumentHelp("The partner whose keys to list (ptr_...).", valueName: "partner-id"), transform: Identifier.parse)
        var partner: String

        @OptionGroup var page: PageOptions
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try global.printer.show(try await global.client().keys(partnerID: partner, try page.request(defaultLimit: PageRequest.defaultLimit)))
        }
    }
}
