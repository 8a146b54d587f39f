import ArgumentParser
import GatewayContract

extension Gatewayctl.Partners {
    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a partner's name, rate, burst, scopes, allowed addresses, quota or max keys.",
            discussion: """
                Only the options given change. Every gateway instance uses the new values \
                within a second. New scopes apply to keys created from now on; existing keys \
                keep theirs. With --dry-run, shows the partner as it is and changes nothing.
                """
        )

        @Argument(help: ArgumentHelp("The partner to change (ptr_...).", valueName: "partner-id"), transform: Identifier.parse)
        var partnerID: String

        @Option(help: "A new display name.")
        var name: String?

        @OptionGroup var limits: PartnerLimits

        @OptionGroup var controls: AccessControlOptions

        @Flag(name: .customLong("dry-run"), help: "Show the partner as it is now, and change nothing.")
        var dryRun = false

        @OptionGroup var global: GlobalOptions

        var update: PartnerUpdate {
            PartnerUpdate(
                name: name, rate: limits.rate, burst: limits.burst, scopes: limits.scopes?.scopes,
                allowedCIDRs: controls.cidrs, quota: controls.quotaSetting, removesQuota: controls.removesQuota, maxKeys: limits.maxKeys
            )
        }

        func validate() throws {
            if let name, name.allSatisfy(\.isWhitespace) {
                throw ValidationError("--name must not be empty")
            }
            if update.isEmpty {
                throw ValidationError("nothing to change: give --name, --rate, --burst, --scopes, --allowed-cidrs, --quota or --max-keys")
            }
        }

        func run() async throws {
            let client = try global.client()
            if dryRun {
                try global.printer.show(try await client.partner(partnerID))
                global.printer.note("dry run: would change \(changes); nothing was changed")
                return
            }
            try global.printer.show(try await client.updatePartner(partnerID, update))
        }

        /// `rate to 10, burst to 20`, for the dry run's note.
        private var changes: String {
            var parts: [String] = []
            if let name { parts.append("name to \(name)") }
            if let rate = limits.rate { parts.append("rate to \(PartnerInfo.format(rate))") }
            if let burst = limits.burst { parts.append("burst to \(burst)") }
            if let scopes = limits.scopes { parts.append("scopes to \(scopes.scopes.joined(separator: ","))") }
            if let cidrs = controls.cidrs { parts.append("allowed_cidrs to \(cidrs.isEmpty ? "any" : cidrs.joined(separator: ","))") }
            if let quota = controls.quota { parts.append("quota to \(quota)") }
            if let maxKeys = limits.maxKeys { parts.append("max_keys to \(maxKeys)") }
            return parts.joined(separator: ", ")
        }
    }
}
