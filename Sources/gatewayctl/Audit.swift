import ArgumentParser

extension Gatewayctl {
    struct Audit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show, verify and export the audit trail of the admin API.",
            discussion: """
                Each entry names the credential that acted (its name and id; root for the \
                break-glass token), the action (partner.create, key.revoke, user.erase, \
                access.refused, ...), the id acted on, the caller's address and any \
                X-Admin-Actor note. Entries form a hash chain: 'verify' recomputes it and names \
                the first entry that was changed, removed or inserted.
                """,
            subcommands: [List.self, Verify.self, Export.self],
            defaultSubcommand: List.self
        )
    }
}
