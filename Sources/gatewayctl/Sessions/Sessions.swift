import ArgumentParser

extension Gatewayctl {
    struct Sessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign a user out of every device.",
            subcommands: [Revoke.self]
        )
    }
}
