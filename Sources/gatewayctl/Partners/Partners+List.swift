import ArgumentParser
import GatewayContract

extension Gatewayctl.Partners {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List partners, oldest first, a page at a time."
        )

        @OptionGroup var page: PageOptions
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try global.printer.show(try await global.client().partners(try page.request(defaultLimit: PageRequest.defaultLimit)))
        }
    }
}
