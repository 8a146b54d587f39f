import ArgumentParser
import GatewayContract

extension Gatewayctl.Members {
    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a member's name or role.",
            discussion: "Only the options given change. Their open sessions act in the new role from their next call."
        )

        @Argument(help: ArgumentHelp("The member to change (mbr_...).", valueName: "member-id"), transform: Identifier.parse)
        var memberID: String

        @Option(help: ArgumentHelp("Their partner (ptr_...).", valueName: "partner-id"), transform: Identifier.parse)
        var partner: String

        @Option(help: ArgumentHelp("A new name.", valueName: "name"))
        var name: String?

        @Option(help: ArgumentHelp("partner_admin, developer or viewer.", valueName: "role"))
        var role: String?

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if name == nil && role == nil { throw ValidationError("nothing to change: give --name or --role") }
        }

        func run() async throws {
            try global.printer.show(try await global.client().updateMember(partnerID: partner, memberID, MemberUpdate(name: name, role: role)))
        }
    }
}
