import ArgumentParser
import GatewayContract

extension Gatewayctl {
    struct Audit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show who changed what through the admin API, newest first.",
            discussion: """
                Each entry has its id (the cursor for --after), the time, the actor \
                (self-declared: gatewayctl sends $USER@host), the action (partner.create, \
                partner.update, key.revoke, sessions.revoke, ...), the id acted on, and the \
                caller's address.
                """
        )

        @OptionGroup var page: PageOptions
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try global.printer.show(try await global.client().audit(try page.request(defaultLimit: PageRequest.defaultAuditLimit)))
        }
    }
}
