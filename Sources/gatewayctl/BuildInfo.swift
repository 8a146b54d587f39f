import GatewayContract

/// What `gatewayctl version` reports: the release (shared with the gateway) and the commit
/// the build plugin read from git at build time (`unknown` outside a git checkout).
enum BuildInfo {
    static let version = Release.version

    static var description: String {
        "gatewayctl \(version) (commit \(GeneratedBuildInfo.commit))"
    }
}
