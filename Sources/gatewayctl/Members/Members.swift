import ArgumentParser

extension Gatewayctl {
    struct Members: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Invite, list, change and remove a partner's members: its people in the partner portal.",
            discussion: """
                A member signs in to the portal (docs/portal.md) with a code sent to their \
                email, and acts on their own partner only: partner_admin (keys, usage, \
                audit and members), developer (keys and usage) or viewer (read only). One \
                email is one member, of one partner. Removing a member ends their sessions on \
                every gateway instance at once.
                """,
            subcommands: [Create.self, List.self, Update.self, Remove.self]
        )
    }
}
