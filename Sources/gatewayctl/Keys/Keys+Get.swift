import ArgumentParser

extension Gatewayctl.Keys {
    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show one key (never the key text itself)."
        )

        @Argument(help: ArgumentHelp("The key to show (key_...).", valueName: "key-id"), transform: Identifier.parse)
        var keyID: String

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try global.printer.show(try await global.client().key(keyID))
        }
    }
}
