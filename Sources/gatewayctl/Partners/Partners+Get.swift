import ArgumentParser

extension Gatewayctl.Partners {
    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show one partner."
        )

        @Argument(help: ArgumentHelp("The partner to show (ptr_...).", valueName: "partner-id"), transform: Identifier.parse)
        var partnerID: String

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try global.printer.show(try await global.client().partner(partnerID))
        }
    }
}
