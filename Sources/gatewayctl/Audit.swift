import ArgumentParser

extension Gatewayctl {
    struct Audit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show who changed what through the admin API, newest first.",
            discussion: """
                Each entry has the time, the actor (self-declared: gatewayctl sends \
                $USER@host), the action (partner.create, key.rotate, sessions.revoke, ...), \
                the id acted on, and the caller's address.
                """
        )

        @Option(help: ArgumentHelp("How many entries to show, 1 to 1000 (default: 50).", valueName: "n"))
        var limit: Int?

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if let limit, !(1...1000).contains(limit) {
                throw ValidationError("--limit must be between 1 and 1000")
            }
        }

        func run() async throws {
            try global.printer.show(try await global.client().audit(limit: limit))
        }
    }
}
