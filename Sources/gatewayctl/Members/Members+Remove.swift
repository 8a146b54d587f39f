import ArgumentParser
import GatewayContract

extension Gatewayctl.Members {
    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a member: they can no longer sign in, and their sessions end at once.",
            discussion: "Asks for confirmation on a terminal; scripts pass --yes. Prints the member removed."
        )

        @Argument(help: ArgumentHelp("The member to remove (mbr_...).", valueName: "member-id"), transform: Identifier.parse)
        var memberID: String

        @Option(help: ArgumentHelp("Their partner (ptr_...).", valueName: "partner-id"), transform: Identifier.parse)
        var partner: String

        @OptionGroup var confirmation: Confirmation
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let client = try global.client()
            let member = try await client.member(partnerID: partner, memberID)
            let label = "\(member.memberID) (\(member.email), \(member.role))"
            if try confirmation.preview(member, action: "remove \(label)", printer: global.printer) { return }
            try confirmation.confirm("Remove member \(label)? Their portal sessions end at once.")
            try await client.removeMember(partnerID: partner, memberID)
            try global.printer.show(member, notes: ["removed: \(member.email) can no longer sign in"])
        }
    }
}
