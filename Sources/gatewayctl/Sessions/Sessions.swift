import ArgumentParser

extension Gatewayctl {
    struct Sessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a user's login sessions and sign them out.",
            subcommands: [List.self, Revoke.self]
        )
    }
}
