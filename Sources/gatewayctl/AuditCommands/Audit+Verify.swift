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
                and all, verifies: compare the head hash with one recorded earlier (an export \
                in a SIEM has it).
                """
        )

        @OptionGroup var trail: AuditTrailOptions
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let report = try await AuditWalk(client: try global.client(), trail: trail.trail).verify()
            try global.printer.show(report, notes: report.problem == nil ? [report.summary] : [])
            if let problem = report.problem {
                throw CtlError(exitCode: CtlError.refusedExitCode, message: "the audit trail is broken: \(problem)")
            }
        }
    }
}
