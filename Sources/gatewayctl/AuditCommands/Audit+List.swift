import ArgumentParser
import GatewayContract

extension Gatewayctl.Audit {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the newest entries first (the default of 'gatewayctl audit').")

        @OptionGroup var page: PageOptions
        @OptionGroup var trail: AuditTrailOptions
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try global.printer.show(try await global.client().audit(try page.request(defaultLimit: PageRequest.defaultAuditLimit), trail: trail.trail))
        }
    }
}
