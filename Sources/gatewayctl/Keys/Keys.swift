import ArgumentParser

extension Gatewayctl {
    struct Keys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create, list, show, find, update, rotate and revoke partners' API keys.",
            discussion: """
                A partner's backend sends its key (pgk_live_...) with every request. The \
                gateway keeps only a hash: the key is printed once, by 'create' and 'rotate', \
                and cannot be shown again; its start (pgk_live_ and four more characters) is \
                shown everywhere to recognise it. A key's status is active, expiring (rotated, \
                still working during its grace period), revoked or expired.
                """,
            subcommands: [Create.self, List.self, Get.self, Find.self, Update.self, Rotate.self, Revoke.self]
        )
    }
}
