import ArgumentParser
import GatewayContract

extension Gatewayctl.Admins {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List admin credentials, oldest first: name, role, status, never the token."
        )

        @OptionGroup var page: PageOptions
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try global.printer.show(try await global.client().admins(try page.request(defaultLimit: PageRequest.defaultLimit)))
        }
    }
}
