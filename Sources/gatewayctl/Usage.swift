import ArgumentParser
import GatewayContract

extension Gatewayctl {
    struct Usage: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a key's or a partner's calls per day, by outcome.",
            discussion: """
                One row per day from --from to --to (YYYY-MM-DD, in the gateway's \
                usage.time_zone, at most 366 days): calls allowed, refused for the key \
                (scope, address, disabled partner), by a rate limit or by a quota, and the \
                upstream's responses by class. A partner's rows add up all its keys. Counts \
                reach Redis within about a second of the call. -o csv prints the rows for a \
                spreadsheet.
                """
        )

        @Option(help: ArgumentHelp("The partner whose keys to add up (ptr_...).", valueName: "partner-id"), transform: Identifier.parse)
        var partner: String?

        @Option(help: ArgumentHelp("The key (key_...).", valueName: "key-id"), transform: Identifier.parse)
        var key: String?

        @Option(help: ArgumentHelp("The first day, YYYY-MM-DD.", valueName: "date"))
        var from: String

        @Option(help: ArgumentHelp("The last day, YYYY-MM-DD (included).", valueName: "date"))
        var to: String

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            guard (partner == nil) != (key == nil) else { throw ValidationError("give exactly one of --partner and --key") }
        }

        func run() async throws {
            let usage = try await global.client().usage(of: partner ?? key ?? "", from: from, to: to)
            try global.printer.show(usage, rows: usage.days)
        }
    }
}
