/// What `gatewayctl version` reports. The version is the release this source tree is; the
/// commit is the one the build plugin read from git at build time (`unknown` when the tree
/// was built outside a git checkout).
enum BuildInfo {
    static let version = "0.9.0"

    static var description: String {
        "gatewayctl \(version) (commit \(GeneratedBuildInfo.commit))"
    }
}
