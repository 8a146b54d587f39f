import ArgumentParser
import GatewayContract

extension Gatewayctl.Members {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a partner's members, oldest first, a page at a time."
        )

        @Option(help: ArgumentHelp("The partner (ptr_...).", valueName: "partner-id"), transform: Identifier.parse)
        var partner: String

        @OptionGroup var page: PageOptions
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try global.printer.show(try await global.client().members(partnerID: partner, try page.request(defaultLimit: PageRequest.defaultLimit)))
        }
    }
}
