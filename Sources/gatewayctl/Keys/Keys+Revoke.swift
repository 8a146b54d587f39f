import ArgumentParser
import GatewayContract

extension Gatewayctl.Keys {
    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop a key from working, at once and for good.",
            discussion: """
                Asks for confirmation on a terminal; scripts pass --yes. Revoking a key that is \
                already revoked is refused (CONFLICT, exit 1) and changes nothing. To replace a \
                key without downtime, use 'gatewayctl keys rotate' instead.
                """
        )

        @Argument(help: ArgumentHelp("The key to revoke (key_...).", valueName: "key-id"), transform: Identifier.parse)
        var keyID: String

        @OptionGroup var confirmation: Confirmation
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let client = try global.client()
            if !confirmation.yes {
                let key = try await client.key(keyID)
                let label = "\(key.keyID) (\(key.start)…\(key.name.map { ", \($0)" } ?? ""))"
                if try confirmation.preview(key, action: "revoke \(label)", printer: global.printer) { return }
                try confirmation.confirm("Revoke key \(label) of partner \(key.partnerID)? It stops working at once, for good.")
            }
            try global.printer.show(try await client.revokeKey(keyID))
        }
    }
}
