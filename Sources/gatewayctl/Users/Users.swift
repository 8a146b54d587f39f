import ArgumentParser

extension Gatewayctl {
    struct Users: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Find and erase drivers, for support staff.",
            discussion: """
                The gateway keeps no phone number, only a keyed digest of it: 'find' sends the \
                number to the gateway, which hashes it exactly as at login. Every lookup is \
                audited.
                """,
            subcommands: [Find.self, Erase.self]
        )
    }
}
