import ArgumentParser
import GatewayContract

extension Gatewayctl.Admins {
    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "End a credential, at once and for good, on every gateway instance.",
            discussion: """
                Asks for confirmation on a terminal; scripts pass --yes. Revoking a credential \
                that is already revoked is refused (CONFLICT, exit 1).
                """
        )

        @Argument(help: ArgumentHelp("The credential to revoke (adm_...).", valueName: "admin-id"), transform: Identifier.parse)
        var adminID: String

        @OptionGroup var confirmation: Confirmation
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let client = try global.client()
            if !confirmation.yes {
                let admin = try await client.admin(adminID)
                let label = "\(admin.adminID) (\(admin.name), \(admin.role))"
                if try confirmation.preview(admin, action: "revoke \(label)", printer: global.printer) { return }
                try confirmation.confirm("Revoke admin credential \(label)? It stops working at once, for good.")
            }
            try global.printer.show(try await client.revokeAdmin(adminID))
        }
    }
}
