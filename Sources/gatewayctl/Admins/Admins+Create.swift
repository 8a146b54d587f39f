import ArgumentParser
import GatewayContract

extension Gatewayctl.Admins {
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a personal admin credential.",
            discussion: """
                The token is shown once. With --token-file it is written to that file \
                (readable by its owner only) instead of the screen, ready to be a profile's \
                token_file.
                """
        )

        @Option(help: ArgumentHelp("Who it belongs to, e.g. asha: the actor of everything it does.", valueName: "name"))
        var name: String

        @Option(help: ArgumentHelp("owner, operator, support, auditor or verifier.", valueName: "role"))
        var role: String

        @Option(
            help: ArgumentHelp("Expire it after this long, e.g. 90d (default: never).", valueName: "duration"),
            transform: DurationOption.parse
        )
        var expiresIn: GatewayDuration?

        @Option(help: ArgumentHelp("Write the token to this new file (mode 600) instead of printing it.", valueName: "path"))
        var tokenFile: String?

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if expiresIn?.isZero == true {
                throw ValidationError("--expires-in must be longer than 0; omit it for a credential that does not expire")
            }
        }

        func run() async throws {
            try CredentialFile.refuseExisting(tokenFile)
            try await UnauditedChange.showing({ try await global.client().createAdmin(NewAdmin(name: name, role: role, expiresIn: expiresIn?.description)) }) { created in
                try CredentialFile.show(created, tokenFile: tokenFile, printer: global.printer)
            }
        }
    }
}
