import ArgumentParser

extension Gatewayctl {
    struct Partners: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create, list, show, update, disable and enable partners.",
            discussion: """
                A partner is a company whose backend calls the gateway with API keys. It has \
                scopes (what its new keys may do unless a key narrows them) and one rate limit \
                shared by all its keys.
                """,
            subcommands: [Create.self, List.self, Get.self, Update.self, Disable.self, Enable.self]
        )
    }
}
