import ArgumentParser
import GatewayContract

/// `--rate`, `--burst`, `--scopes` and `--max-keys`, shared by `partners create` and `partners update`
/// so both check them the same way before any request.
struct PartnerLimits: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Requests per second that refill the partner's rate limit; may be fractional (create's default: 50).",
        valueName: "per-second"
    ))
    var rate: Double?

    @Option(help: ArgumentHelp(
        "How many requests the partner may make in a burst, above the rate (create's default: 100).",
        valueName: "requests"
    ))
    var burst: Int?

    @Option(
        help: ArgumentHelp("Comma-separated scopes the partner's new keys get (create's default: sdk_tokens:mint).", valueName: "s1,s2"),
        transform: ScopeList.init(parsing:)
    )
    var scopes: ScopeList?

    @Option(help: ArgumentHelp(
        "How many live keys the partner's members may hold in the portal, 1 to 1000 (create's default: 20).", valueName: "n"
    ))
    var maxKeys: Int?

    func validate() throws {
        if let maxKeys, let problem = AdminInputRules.maxKeysProblem(maxKeys) {
            throw ValidationError("--max-keys: \(problem)")
        }
        if let rate, !(rate > 0 && rate.isFinite) {
            throw ValidationError("--rate must be a positive number of requests per second")
        }
        if let burst, burst < 1 {
            throw ValidationError("--burst must be at least 1")
        }
    }
}
