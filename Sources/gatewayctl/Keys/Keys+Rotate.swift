import ArgumentParser
import GatewayContract

extension Gatewayctl.Keys {
    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace a key with a new one, keeping the old one working for a while.",
            discussion: """
                Issues a new key with the same partner, scopes, name and metadata and prints it \
                once. The old key stays valid for the grace period (it shows as 'expiring' in \
                'gatewayctl keys list') so the partner can deploy the new key without downtime; \
                then it stops working. Use --grace 0 when the old key has leaked. A revoked or \
                expired key cannot be rotated (CONFLICT).
                """
        )

        @Argument(help: ArgumentHelp("The key to replace (key_...).", valueName: "key-id"), transform: Identifier.parse)
        var keyID: String

        @Option(
            help: ArgumentHelp(
                "How long the old key keeps working, e.g. 1h or 1d12h; 0 ends it at once (default: 24h).",
                valueName: "duration"
            ),
            transform: DurationOption.parse
        )
        var grace: GatewayDuration?

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await UnauditedChange.showing({ try await global.client().rotateKey(keyID, KeyRotation(grace: grace?.description)) }) { rotated in
                try global.printer.show(rotated, notes: Printer.oneTimeKeyNotes(rotated.key))
            }
        }
    }
}
