import ArgumentParser
import GatewayContract

extension Gatewayctl.Members {
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Invite a person to a partner's portal.",
            discussion: """
                Prints the new member, including its id (mbr_...). They sign in at the \
                portal with their email; nothing is sent until they ask for a code.
                """
        )

        @Option(help: ArgumentHelp("The partner (ptr_...).", valueName: "partner-id"), transform: Identifier.parse)
        var partner: String

        @Option(help: ArgumentHelp("Where their sign-in codes go.", valueName: "email"))
        var email: String

        @Option(help: ArgumentHelp("Their name, as the audit trail shows it.", valueName: "name"))
        var name: String

        @Option(help: ArgumentHelp("partner_admin, developer or viewer.", valueName: "role"))
        var role: String

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try global.printer.show(try await global.client().createMember(partnerID: partner, NewMember(email: email, name: name, role: role)))
        }
    }
}
