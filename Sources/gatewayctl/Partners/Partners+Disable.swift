import ArgumentParser
import GatewayContract

extension Gatewayctl.Partners {
    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop a partner's traffic without deleting anything.",
            discussion: """
                Every key of the partner is refused (403) until 'gatewayctl partners enable'. \
                Keys are kept, so enabling the partner again restores them. Asks for \
                confirmation on a terminal; scripts pass --yes.
                """
        )

        @Argument(help: ArgumentHelp("The partner to disable (ptr_...).", valueName: "partner-id"), transform: Identifier.parse)
        var partnerID: String

        @OptionGroup var confirmation: Confirmation
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let client = try global.client()
            if !confirmation.yes {
                let partner = try await client.partner(partnerID)
                if try confirmation.preview(partner, action: "disable \(partner.partnerID) (\(partner.name))", printer: global.printer) { return }
                try confirmation.confirm("Disable partner \(partner.partnerID) (\(partner.name))? Every one of its keys is refused until it is enabled.")
            }
            try global.printer.show(try await client.disablePartner(partnerID))
        }
    }
}
