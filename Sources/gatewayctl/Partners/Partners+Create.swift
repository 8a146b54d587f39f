import ArgumentParser

extension Gatewayctl.Partners {
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a partner.",
            discussion: """
                Prints the new partner, including its id (ptr_...). Then give it a key with \
                'gatewayctl keys create --partner PARTNER_ID'.
                """
        )

        @Option(help: "The partner's display name, e.g. NammaYatri.")
        var name: String

        @Option(help: ArgumentHelp(
            "Requests per second that refill the partner's rate limit; may be fractional (default: 50).",
            valueName: "per-second"
        ))
        var rate: Double?

        @Option(help: ArgumentHelp(
            "How many requests the partner may make in a burst, above the rate (default: 100).",
            valueName: "requests"
        ))
        var burst: Int?

        @Option(
            help: ArgumentHelp("Comma-separated scopes the partner's keys get (default: sdk_tokens:mint).", valueName: "s1,s2"),
            transform: ScopeList.init(parsing:)
        )
        var scopes: ScopeList?

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if name.allSatisfy(\.isWhitespace) {
                throw ValidationError("--name must not be empty")
            }
            if let rate, !(rate > 0 && rate.isFinite) {
                throw ValidationError("--rate must be a positive number of requests per second")
            }
            if let burst, burst < 1 {
                throw ValidationError("--burst must be at least 1")
            }
        }

        func run() async throws {
            let partner = try await global.client().createPartner(
                NewPartner(name: name, rate: rate, burst: burst, scopes: scopes?.scopes)
            )
            try global.printer.show(partner)
        }
    }
}
