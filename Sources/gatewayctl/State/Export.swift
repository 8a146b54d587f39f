import ArgumentParser
import Foundation
import GatewayState

extension Gatewayctl {
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the gateway's partners, keys, members and admin credentials as a state file (partners as code).",
            discussion: """
                YAML on stdout, or to the file -o names: every partner, its keys that have not \
                ended, its members and the admin credentials that have not ended, by id, with \
                every field 'apply' manages and never a secret (no key, hash, token, session \
                or sign-in code). Sorted and formatted the \
                same way every time, so two exports of the same state are identical and a \
                change reads as a small diff. Reading admin credentials needs an owner or \
                auditor; --no-admins leaves them out (the file then does not manage them).
                """
        )

        @Flag(name: .customLong("no-admins"), help: "Leave admin credentials out.")
        var noAdmins = false

        @OptionGroup var connection: ConnectionOptions
        /// `-o FILE`: where the file goes instead of stdout.
        @OptionGroup var display: OutputOptions

        func validate() throws {
            if display.json { throw ValidationError("export writes YAML: -o names a file, and --json has no place here") }
            // Every other command reads these as formats: a file named `yaml` is never what was meant.
            if let text = display.text, ["table", "json", "yaml", "csv"].contains(text) {
                throw ValidationError("export writes YAML: -o names a file (-o \(text).yaml), not a format")
            }
        }

        func run() async throws {
            let client = try connection.client()
            let snapshot: GatewaySnapshot
            do {
                snapshot = try await client.withSharedConnections(StateOptions.parallelCalls) { try await GatewaySnapshot.load(from: $0, admins: !noAdmins, width: StateOptions.parallelCalls) }
            } catch let error as CtlError where !noAdmins && error.message.hasSuffix("(FORBIDDEN)") {
                throw CtlError(exitCode: error.exitCode, message: error.message + "; --no-admins leaves admin credentials out")
            }
            let text = try StateExport.yaml(snapshot)
            guard let outputFile = display.text else {
                print(text, terminator: "")
                return
            }
            do {
                try Data(text.utf8).write(to: URL(fileURLWithPath: outputFile), options: .atomic)
            } catch {
                throw CtlError.usage("cannot write \(outputFile): \(error.localizedDescription)")
            }
        }
    }
}
