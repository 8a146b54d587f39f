import ArgumentParser
import GatewayContract

extension Gatewayctl.Partners {
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a partner.",
            discussion: """
                Prints the new partner, including its id (ptr_...). Then give it a key with \
                'gatewayctl keys create --partner PARTNER_ID'.
                """
        )

        @Option(help: "The partner's display name, e.g. NammaYatri.")
        var name: String

        @OptionGroup var limits: PartnerLimits
        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if name.allSatisfy(\.isWhitespace) {
                throw ValidationError("--name must not be empty")
            }
        }

        func run() async throws {
            let partner = try await global.client().createPartner(
                NewPartner(name: name, rate: limits.rate, burst: limits.burst, scopes: limits.scopes?.scopes, maxKeys: limits.maxKeys)
            )
            try global.printer.show(partner)
        }
    }
}
