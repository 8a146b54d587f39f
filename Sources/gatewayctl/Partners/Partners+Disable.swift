import ArgumentParser

extension Gatewayctl.Partners {
    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop a partner's traffic without deleting anything.",
            discussion: """
                Every key of the partner is refused (403) until 'gatewayctl partners enable'. \
                Keys are kept, so enabling the partner again restores them.
                """
        )

        @Argument(help: ArgumentHelp("The partner to disable (ptr_...).", valueName: "partner-id"), transform: Identifier.parse)
        var partnerID: String

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try global.printer.show(try await global.client().disablePartner(partnerID))
        }
    }
}
