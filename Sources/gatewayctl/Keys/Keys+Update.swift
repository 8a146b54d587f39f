import ArgumentParser
import GatewayContract

extension Gatewayctl.Keys {
    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a key's allowed addresses, quota, name or scopes.",
            discussion: """
                Only the options given change. Every gateway instance uses the change within \
                a second. A key's --allowed-cidrs narrow its partner's; its --quota applies \
                together with its partner's; its --scopes are its partner's or fewer.
                """
        )

        @Argument(help: ArgumentHelp("The key to change (key_...).", valueName: "key-id"), transform: Identifier.parse)
        var keyID: String

        @Option(help: "A new label.")
        var name: String?

        @Option(
            help: ArgumentHelp("Comma-separated scopes the key holds from now on: its partner's or fewer.", valueName: "s1,s2"),
            transform: ScopeList.init(parsing:)
        )
        var scopes: ScopeList?

        @OptionGroup var controls: AccessControlOptions

        @OptionGroup var global: GlobalOptions

        var update: KeyUpdate {
            KeyUpdate(allowedCIDRs: controls.cidrs, quota: controls.quotaSetting, removesQuota: controls.removesQuota, name: name, scopes: scopes?.scopes)
        }

        func validate() throws {
            if update.isEmpty { throw ValidationError("nothing to change: give --allowed-cidrs, --quota, --name or --scopes") }
        }

        func run() async throws {
            try global.printer.show(try await global.client().updateKey(keyID, update))
        }
    }
}
