import ArgumentParser
import GatewayContract

extension Gatewayctl.Audit {
    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Walk the whole hash chain and name the first entry changed, removed or inserted.",
            discussion: """
                Reads every entry, oldest first, recomputes each hash and checks each links \
                to the one before; a trail whose cap trimmed its oldest entries is checked \
                from the first one kept, which must follow what the gateway recorded \
                trimming ("N entries trimmed, chain verified from #X"). Exit 0 and a summary (with the newest entry's hash: keep it, \
                a later verify must still reach it) when the chain holds; exit 1 naming the \
                first broken entry otherwise. A chain rewritten from some entry on, hashes \
                and all, or wiped, verifies on its own: keep each run's head outside Redis and \
                pass it to the next as --anchor SEQ:HASH, which the chain must still hold.
                """
        )

        @Option(
            help: ArgumentHelp(
                "An entry an earlier verify printed as its head, kept outside Redis: the chain must still hold it.",
                valueName: "seq:hash"
            ),
            transform: Self.parseAnchor
        )
        var anchor: AuditAnchor?

        @OptionGroup var trail: AuditTrailOptions
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let report = try await AuditWalk(client: try global.client(), trail: trail.trail).verify(anchor: anchor)
            try global.printer.show(report, notes: report.problem == nil ? [report.summary] + report.nextAnchorNote : [])
            if let problem = report.problem {
                throw CtlError(exitCode: CtlError.refusedExitCode, message: "the audit trail is broken: \(problem)")
            }
        }

        static func parseAnchor(_ text: String) throws -> AuditAnchor {
            guard let anchor = AuditAnchor(text) else {
                throw ValidationError("--anchor takes SEQ:HASH, an entry number and its 64-hex hash as verify prints them, e.g. 350:9f86d0...")
            }
            return anchor
        }
    }
}
