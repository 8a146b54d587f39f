import ArgumentParser
import GatewayContract

extension Gatewayctl.Sessions {
    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign a user out of one session, or of every session.",
            discussion: """
                Without --session, every refresh and access token issued to the user before \
                now stops working, so each of the user's apps has to sign in again (with a new \
                OTP). With --session (a session id from 'sessions list'), only that login ends.

                It asks for confirmation on a terminal; scripts pass --yes (without it, and \
                with no terminal to ask on, nothing is revoked and the exit status is 64); \
                --dry-run only says what would be revoked.
                """
        )

        @Option(help: ArgumentHelp("The user to sign out.", valueName: "user-id"), transform: Identifier.parse)
        var user: String

        @Option(help: ArgumentHelp("Only this session (see 'sessions list').", valueName: "session-id"), transform: Identifier.parse)
        var session: String?

        @OptionGroup var confirmation: Confirmation

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let client = try global.client()
            let (action, question) = if let session {
                ("revoke session \(session) of \(user)", "Revoke session \(session) of \(user)? That login's tokens stop working.")
            } else {
                ("revoke every session of \(user)", "Revoke every session of \(user)? All of the user's apps must log in again.")
            }
            if confirmation.dryRun {
                global.printer.note("dry run: would \(action); nothing was changed")
                return
            }
            try confirmation.confirm(question)
            if let session {
                try global.printer.show(try await client.revokeSession(userID: user, sessionID: session))
            } else {
                try global.printer.show(try await client.revokeSessions(userID: user))
            }
        }
    }
}
