import ArgumentParser
import GatewayContract

extension Gatewayctl.Users {
    struct Erase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Erase a driver: end every session and delete everything kept about them.",
            discussion: """
                Every session is revoked at once; the user record, the phone's index, OTP \
                state and everything else kept under the user or the phone's digest is \
                deleted. The audit trail keeps only the user id and the fact of erasure. The \
                same phone can log in again afterwards, as a new user. This cannot be undone: \
                it asks for confirmation on a terminal; scripts pass --yes, --dry-run only \
                says what would be erased.
                """
        )

        @Argument(help: ArgumentHelp("The user to erase (usr_...).", valueName: "user-id"), transform: Identifier.parse)
        var userID: String

        @OptionGroup var confirmation: Confirmation
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let client = try global.client()
            if confirmation.dryRun {
                global.printer.note("dry run: would erase \(userID) and every session of it; nothing was changed")
                return
            }
            try confirmation.confirm("Erase user \(userID)? Every session ends and their data is deleted, for good.")
            try global.printer.show(try await client.eraseUser(userID))
        }
    }
}
