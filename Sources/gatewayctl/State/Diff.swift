import ArgumentParser
import GatewayState

extension Gatewayctl {
    struct Diff: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show what applying state files would change (partners as code).",
            discussion: """
                Reads the files (-f, files or directories), checks them, reads the gateway and \
                prints each partner, key, member and admin credential that would change, field by \
                field: + create, ~ update, - remove (with --prune), ! a change the admin API \
                cannot make. -o json or -o yaml prints the same as one document. Exit status: \
                0 nothing would change, 1 something would (drift), 2 an error.
                """
        )

        @OptionGroup var state: StateOptions
        @OptionGroup var global: GlobalOptions

        /// What `diff` exits with (`apply --dry-run` too).
        static let driftExitCode: Int32 = 1
        static let errorExitCode: Int32 = 2

        func run() async throws {
            try await Self.show(state: state, global: global)
        }

        /// The plan printed; exits 1 when it changes anything, 2 on any error.
        static func show(state: StateOptions, global: GlobalOptions) async throws {
            do {
                if global.output == .csv { throw CtlError.usage("a plan prints as a text (-o table), json or yaml, not csv") }
                let document = try state.document()
                let client = try global.client()
                let plan = try await client.withSharedConnections(StateOptions.parallelCalls) { try await state.plan(document, client: $0) }
                try StatePrinting.show(plan, printer: global.printer)
                if !plan.isEmpty { throw ExitCode(driftExitCode) }
            } catch let error as ExitCode {
                throw error
            } catch let error as CtlError {
                throw CtlError(exitCode: errorExitCode, message: error.message)
            } catch {
                throw CtlError(exitCode: errorExitCode, message: "\(error)")
            }
        }
    }
}
