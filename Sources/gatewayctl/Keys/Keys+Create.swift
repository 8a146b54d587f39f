import ArgumentParser

extension Gatewayctl.Keys {
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a new API key for a partner.",
            discussion: """
                The key is printed once: store it now (or hand it to the partner) because it \
                cannot be shown again. A lost key is replaced with 'gatewayctl keys rotate'.
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
            help: ArgumentHelp("Expire the key after this long, e.g. 90d or 12h (default: never).", valueName: "duration"),
            transform: DurationText.init(parsing:)
        )
        var expiresIn: DurationText?

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if expiresIn?.isZero == true {
                throw ValidationError("--expires-in must be longer than 0; omit it for a key that does not expire")
            }
        }

        func run() async throws {
            let key = try await global.client().createKey(
                partnerID: partner,
                NewKey(scopes: scopes?.scopes, expiresIn: expiresIn?.description)
            )
            try global.printer.show(key, notes: Printer.oneTimeKeyNotes(key.key))
        }
    }
}
