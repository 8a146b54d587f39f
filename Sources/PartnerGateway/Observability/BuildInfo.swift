import Foundation
import Metrics

/// Which build is running: `gateway_build_info{version,commit} 1` and `--version`.
///
/// The version is set here at release time. The commit cannot be compiled in with SwiftPM
/// alone (Swift has no valued compile-time defines), so it is read from
/// `GATEWAY_BUILD_COMMIT`, which the deployment sets from the commit it built
/// (`scripts/run.sh` sets it from `git rev-parse`); `unknown` otherwise.
enum BuildInfo {
    static let version = "1.0.0"

    static var commit: String {
        let value = ProcessInfo.processInfo.environment["GATEWAY_BUILD_COMMIT"] ?? ""
        let sane = !value.isEmpty && value.count <= 64 && value.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }
        return sane ? value : "unknown"
    }

    /// `PartnerGateway 1.0.0 (commit abc123)`.
    static var summary: String {
        "PartnerGateway \(version) (commit \(commit))"
    }

    static func export() {
        Gauge(label: "gateway_build_info", dimensions: [("version", version), ("commit", commit)]).record(1)
    }
}
