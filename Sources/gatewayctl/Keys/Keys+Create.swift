import ArgumentParser
import GatewayContract

extension Gatewayctl.Keys {
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a new API key for a partner.",
            discussion: """
                The key is printed once: store it now (or hand it to the partner) because it \
                cannot be shown again. Its start (pgk_live_ and the first four characters of \
                the secret) is shown with it from now on, so it can be recognised. A lost key \
                is replaced with 'gatewayctl keys rotate'.
                """
        )

        @Option(help: ArgumentHelp("The partner the key belongs to (ptr_...).", valueName: "partner-id"), transform: Identifier.parse)
        var partner: String

        @Option(
            help: ArgumentHelp("Comma-separated scopes for this key (default: the partner's scopes).", valueName: "s1,s2"),
            transform: ScopeList.init(parsing:)
        )
        var scopes: ScopeList?

        @Option(
            help: ArgumentHelp("Expire the key after this long, e.g. 90d or 1d12h (default: never).", valueName: "duration"),
            transform: DurationOption.parse
        )
        var expiresIn: GatewayDuration?

        @Option(help: ArgumentHelp("A label to recognise the key by, e.g. checkout-backend.", valueName: "name"))
        var name: String?

        @Option(
            help: ArgumentHelp("A label NAME=VALUE kept with the key, e.g. team=payments; repeat for more.", valueName: "name=value"),
            transform: MetaEntry.init(parsing:)
        )
        var meta: [MetaEntry] = []

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if expiresIn?.isZero == true {
                throw ValidationError("--expires-in must be longer than 0; omit it for a key that does not expire")
            }
            if let name, name.allSatisfy(\.isWhitespace) {
                throw ValidationError("--name must not be empty")
            }
            _ = try MetaEntry.dictionary(meta)
        }

        func run() async throws {
            let asked = NewKey(scopes: scopes?.scopes, expiresIn: expiresIn?.description, name: name, meta: meta.isEmpty ? nil : try MetaEntry.dictionary(meta))
            try await UnauditedChange.showing({ try await global.client().createKey(partnerID: partner, asked) }) { key in
                try global.printer.show(key, notes: Printer.oneTimeKeyNotes(key.key))
            }
        }
    }
}
