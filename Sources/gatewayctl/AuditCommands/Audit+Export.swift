import ArgumentParser
import Foundation
import GatewayContract

extension Gatewayctl.Audit {
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write entries as JSON lines, oldest first, for a SIEM.",
            discussion: """
                One entry per line with every field, hashes included, from --from (included) \
                to --to (excluded), both RFC 3339 times such as 2026-11-22T00:00:00Z; without \
                them, the whole trail.
                """
        )

        @Option(help: ArgumentHelp("The first moment to include.", valueName: "time"), transform: AuditTime.parse)
        var from: AuditTime?

        @Option(help: ArgumentHelp("The first moment not to include.", valueName: "time"), transform: AuditTime.parse)
        var to: AuditTime?

        @OptionGroup var trail: AuditTrailOptions
        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if let from, let to, to.date <= from.date { throw ValidationError("--to must be later than --from") }
        }

        func run() async throws {
            try await AuditWalk(client: try global.client(), trail: trail.trail).export(from: from?.date, to: to?.date) { print($0) }
        }
    }
}
