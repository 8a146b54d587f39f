import ArgumentParser
import GatewayContract

extension Gatewayctl.Sessions {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a user's live sessions (never a token), newest first, a page at a time.",
            discussion: """
                One row per login: its session id (the access tokens' sid), channel, partner, \
                when it began, when it was last refreshed and when it ends unless refreshed.
                """
        )

        @Option(help: ArgumentHelp("The user whose sessions to list.", valueName: "user-id"), transform: Identifier.parse)
        var user: String

        @OptionGroup var page: PageOptions
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try global.printer.show(try await global.client().sessions(userID: user, try page.request(defaultLimit: PageRequest.defaultLimit)))
        }
    }
}
