import ArgumentParser
import Foundation
import GatewayState

extension Gatewayctl {
    struct Apply: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make the gateway match state files (partners as code).",
            discussion: """
                Plans as 'gatewayctl diff' does, prints the plan, then makes each change \
                through the admin API, audited under your credential. A file with any problem, \
                or a plan with a change the admin API cannot make, changes nothing. A key or \
                admin credential created gets its secret written once to --secrets-out (a file \
                per secret, mode 600, or - for stdout), never to the state file. --prune also \
                removes what the files do not name, after confirmation (--yes in scripts). \
                Stops at the first failure and says what was and was not applied; applying \
                again converges. A resource changed by someone else since it was read is \
                refused (PRECONDITION_FAILED), never half-changed.
                """
        )

        @OptionGroup var state: StateOptions

        @Option(
            name: .customLong("secrets-out"),
            help: ArgumentHelp("Where new keys' and credentials' secrets go: a directory (a file per secret, mode 600), or - for stdout.", valueName: "dir")
        )
        var secretsOut: String?

        @OptionGroup var confirmation: Confirmation
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            if confirmation.dryRun {
                try await Diff.show(state: state, global: global)
                return
            }
            if global.output == .csv { throw CtlError.usage("a plan prints as a text (-o table), json or yaml, not csv") }
            let document = try state.document()
            let secrets = secretsOut.map(SecretsOut.init)
            // With the secrets on stdout, the plan and the report go to stderr.
            let printer = secrets?.printsToStandardOutput == true ? nil : global.printer
            let client = try global.client()
            try await client.withSharedConnections(StateOptions.parallelCalls) { client in
                let plan = try await state.plan(document, client: client)
                try StatePrinting.show(plan, printer: printer)
                guard !plan.isEmpty else { return }
                guard plan.blocked.isEmpty else {
                    throw CtlError(
                        exitCode: CtlError.refusedExitCode,
                        message: "\(plan.blocked.count) \(plan.blocked.count == 1 ? "change" : "changes") above (marked !) cannot be made through the admin API; nothing was changed"
                    )
                }
                try prepare(secrets, for: plan)
                let removals = plan.changes.filter { $0.action == .remove }
                if !removals.isEmpty {
                    try confirmation.confirm("Remove \(removals.count) not named in the files (\(Self.list(removals)))?")
                }
                let applier = StateApplier(api: client, width: StateOptions.parallelCalls) { secret in
                    guard let secrets else { throw CtlError.usage("no --secrets-out for the secret of \(secret.id)") }
                    return try secrets.keep(secret)
                }
                let report = await applier.apply(plan)
                try Self.finish(report, total: plan.changes.count, say: printer.map { printer in { printer.note($0) } } ?? StandardError.writeLine)
            }
        }

        /// Refuses, before any change, a plan whose new secrets would have nowhere to go.
        private func prepare(_ secrets: SecretsOut?, for plan: StatePlan) throws {
            let creations = plan.changes.filter { $0.action == .create && $0.kind.hasSecret }
            guard !creations.isEmpty else { return }
            guard let secrets else {
                throw CtlError.usage(
                    "the plan creates \(creations.count) \(creations.count == 1 ? "key or credential" : "keys or credentials"): give --secrets-out DIR (a file per secret, mode 600) or --secrets-out - (stdout) for their secrets; nothing was changed"
                )
            }
            try secrets.prepare(for: creations.compactMap(\.id))
        }

        /// What was applied, where new secrets went, and on a failure what was not.
        private static func finish(_ report: StateApplier<AdminClient>.Report, total: Int, say: (String) -> Void) throws {
            for applied in report.applied {
                if let place = applied.secretWentTo, place != "stdout" {
                    say("created \(applied.change.label): secret in \(place)")
                }
            }
            guard let failure = report.failure else {
                say("Applied \(report.applied.count) \(report.applied.count == 1 ? "change" : "changes").")
                return
            }
            say("Applied \(report.applied.count) of \(total) changes: " + (report.applied.isEmpty ? "none" : list(report.applied.map(\.change))) + ".")
            say("Not applied: \(list(report.notApplied)).")
            say("Failed: \(failure.change.label). Apply the files again once the cause is fixed: the plan starts from what the gateway holds then.")
            if let error = failure.error as? CtlError { throw error }
            throw CtlError(exitCode: CtlError.refusedExitCode, message: "\(failure.error)")
        }

        static func list(_ changes: [StateChange]) -> String {
            let shown = changes.prefix(10).map(\.label).joined(separator: ", ")
            return changes.count > 10 ? shown + " and \(changes.count - 10) more" : shown
        }
    }
}
