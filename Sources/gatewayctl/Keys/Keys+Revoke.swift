import ArgumentParser

extension Gatewayctl.Keys {
    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop a key from working, at once and for good.",
            discussion: "To replace a key without downtime, use 'gatewayctl keys rotate' instead."
        )

        @Argument(help: ArgumentHelp("The key to revoke (key_...).", valueName: "key-id"), transform: Identifier.parse)
        var keyID: String

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try global.printer.show(try await global.client().revokeKey(keyID))
        }
    }
}
