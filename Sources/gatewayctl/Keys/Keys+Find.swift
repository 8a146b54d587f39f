import ArgumentParser
import Foundation
import GatewayContract

extension Gatewayctl.Keys {
    struct Find: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Tell which key a presented key is: its id, partner, status and expiry.",
            discussion: """
                Reads the key from stdin, never from the command line (where 'ps' and shell \
                history would keep it), e.g. 'pbpaste | gatewayctl keys find' or \
                'gatewayctl keys find < leaked.txt'. The gateway looks it up by its hash, as it \
                verifies keys; the key itself reaches no log and no audit entry. A leaked key \
                is then ended with 'gatewayctl keys revoke KEY_ID' or replaced with \
                'gatewayctl keys rotate KEY_ID --grace 0'.
                """
        )

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let client = try global.client()
            let key = Self.readKey().trimmingCharacters(in: .whitespacesAndNewlines)
            guard !key.isEmpty else { throw CtlError.usage("no key on stdin: pipe the key in, e.g. gatewayctl keys find < key.txt") }
            try global.printer.show(try await client.findKey(KeyLookup(key: key)))
        }

        /// A pipe or file is read to its end (a key is one line, so at most 4 KiB is kept); on
        /// a terminal, one pasted line after a prompt on stderr.
        static func readKey() -> String {
            if isatty(STDIN_FILENO) == 1 {
                StandardError.write("key (input is not logged): ")
                return readLine() ?? ""
            }
            return String(decoding: FileHandle.standardInput.readDataToEndOfFile().prefix(4096), as: UTF8.self)
        }
    }
}
