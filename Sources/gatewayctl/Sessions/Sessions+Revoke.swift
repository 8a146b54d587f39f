import ArgumentParser

extension Gatewayctl.Sessions {
    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign a user out of one session, or of every session.",
            discussion: """
                Without --session, every refresh and access token issued to the user before \
                now stops working, so each of the user's apps has to sign in again (with a new \
                OTP). With --session (a session id from 'sessions list'), only that login ends.

                It asks for confirmation on a terminal; scripts pass --yes (without it, and \
                with no terminal to ask on, nothing is revoked and the exit status is 4).
                """
        )

        @Option(help: ArgumentHelp("The user to sign out.", valueName: "user-id"), transform: Identifier.parse)
        var user: String

        @Option(help: ArgumentHelp("Only this session (see 'sessions list').", valueName: "session-id"), transform: Identifier.parse)
        var session: String?

        @Flag(name: [.customShort("y"), .long], help: "Do not ask for confirmation (for scripts).")
        var yes = false

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let client = try global.client()
            if let session {
                try Confirmation.require("Revoke session \(session) of \(user)? That login's tokens stop working.", yes: yes)
                try global.printer.show(try await client.revokeSession(userID: user, sessionID: session))
            } else {
                try Confirmation.require("Revoke every session of \(user)? All of the user's apps must log in again.", yes: yes)
                try global.printer.show(try await client.revokeSessions(userID: user))
            }
        }
    }
}
