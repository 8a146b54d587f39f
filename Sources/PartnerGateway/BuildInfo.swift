import GatewayContract
import Metrics

/// Which build is running: `gateway_build_info{version,commit} 1` and `--version`. The
/// commit is the one the build plugin read from git at build time (`-dirty` when tracked
/// files had uncommitted changes, `unknown` when built outside a git checkout).
enum BuildInfo {
    static let version = Release.version
    static let commit = GeneratedBuildInfo.commit

    /// `PartnerGateway 1.0.0 (commit abc123)`.
    static var summary: String {
        "PartnerGateway \(version) (commit \(commit))"
    }

    static func export() {
        Gauge(label: "gateway_build_info", dimensions: [("version", version), ("commit", commit)]).record(1)
    }
}
