import ArgumentParser
import GatewayContract

extension Gatewayctl.Admins {
    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace a credential's token; the old token stops working at once.",
            discussion: """
                The same person, role and id keep acting; only the token changes. The expiry \
                is kept unless --expires-in gives a new one, counted from now.
                """
        )

        @Argument(help: ArgumentHelp("The credential (adm_...).", valueName: "admin-id"), transform: Identifier.parse)
        var adminID: String

        @Option(
            help: ArgumentHelp("A new lifetime from now, e.g. 90d (default: keep the expiry).", valueName: "duration"),
            transform: DurationOption.parse
        )
        var expiresIn: GatewayDuration?

        @Option(help: ArgumentHelp("Write the new token to this new file (mode 600) instead of printing it.", valueName: "path"))
        var tokenFile: String?

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if expiresIn?.isZero == true { throw ValidationError("--expires-in must be longer than 0") }
        }

        func run() async throws {
            try CredentialFile.refuseExisting(tokenFile)
            try await UnauditedChange.showing({ try await global.client().rotateAdmin(adminID, AdminRotation(expiresIn: expiresIn?.description)) }) { rotated in
                try CredentialFile.show(rotated, tokenFile: tokenFile, printer: global.printer)
            }
        }
    }
}
