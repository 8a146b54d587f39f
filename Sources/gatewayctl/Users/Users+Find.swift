import ArgumentParser
import Foundation
import GatewayContract

extension Gatewayctl.Users {
    struct Find: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the user a phone number belongs to: id, created, live sessions.",
            discussion: """
                Reads the phone from stdin, never from the command line (where 'ps' and shell \
                history would keep it): on a terminal it asks for it, e.g. 'gatewayctl users \
                find', else it reads a pipe or file, e.g. 'gatewayctl users find < phone.txt'. \
                A 10-digit Indian mobile number; +91 or 91 in front is fine.
                """
        )

        /// No longer taken, only recognised, so the refusal can say what to do instead
        /// rather than echo the number back as an unexpected argument.
        @Option(help: .hidden)
        var phone: String?

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            guard phone == nil else {
                throw CtlError.usage("--phone is not taken (ps and shell history would keep the number): run 'gatewayctl users find' and type it, or pipe it in")
            }
            let client = try global.client()
            let phone = Self.readPhone().trimmingCharacters(in: .whitespacesAndNewlines)
            guard !phone.isEmpty else {
                throw CtlError.usage("no phone on stdin: type it when asked, or pipe it in, e.g. gatewayctl users find < phone.txt")
            }
            try global.printer.show(try await client.findUser(phone: phone))
        }

        /// A pipe or file is read to its end (at most 256 bytes are kept: a phone is one short
        /// line); on a terminal, one line after a prompt on stderr.
        static func readPhone() -> String {
            if isatty(STDIN_FILENO) == 1 {
                StandardError.write("phone (input is not logged): ")
                return readLine() ?? ""
            }
            return String(decoding: FileHandle.standardInput.readDataToEndOfFile().prefix(256), as: UTF8.self)
        }
    }
}
