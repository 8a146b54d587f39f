import ArgumentParser

extension Gatewayctl {
    struct Admins: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create, list, rotate and revoke personal admin credentials (owners only).",
            discussion: """
                Each person gets their own credential (pga_live_...) with a role: owner \
                (everything), operator (partners, keys, status), support (find drivers, list, \
                revoke and erase their sessions and data; read partners and keys), auditor \
                (read everything, including the audit trail) or verifier (a service's: only \
                POST /v1/verify on the authorization listener). The audit trail names the \
                credential behind every action. The gateway keeps only a hash: the token is \
                printed once, by 'create' and 'rotate' (or written to --token-file), and a \
                profile's token_file is where it belongs.
                """,
            subcommands: [Create.self, List.self, Rotate.self, Revoke.self]
        )
    }
}
