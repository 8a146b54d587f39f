import ArgumentParser

extension Gatewayctl.Partners {
    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Let a disabled partner's keys work again."
        )

        @Argument(help: ArgumentHelp("The partner to enable (ptr_...).", valueName: "partner-id"), transform: Identifier.parse)
        var partnerID: String

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try global.printer.show(try await global.client().enablePartner(partnerID))
        }
    }
}
