import ArgumentParser

extension Gatewayctl.Sessions {
    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Invalidate every token a user holds.",
            discussion: """
                Every refresh and access token issued to the user before now stops working, \
                so each of the user's apps has to sign in again (with a new OTP).
                """
        )

        @Option(help: ArgumentHelp("The user to sign out.", valueName: "user-id"), transform: Identifier.parse)
        var user: String

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try global.printer.show(try await global.client().revokeSessions(userID: user))
        }
    }
}
