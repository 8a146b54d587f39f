import ArgumentParser
import Foundation
import GatewayContract

/// `--allowed-cidrs` and `--quota` of `partners update` and `keys update`.
struct AccessControlOptions: ParsableArguments {
    @Option(
        name: .customLong("allowed-cidrs"),
        help: ArgumentHelp("Addresses calls may come from, comma-separated (203.0.113.0/24,2001:db8::/32); \"\" allows any.", valueName: "cidrs")
    )
    var allowedCIDRs: String?

    @Option(help: ArgumentHelp("Calls per calendar day or month (100000/month), or none to remove the quota.", valueName: "limit/period"))
    var quota: String?

    var cidrs: [String]? {
        allowedCIDRs.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
    }

    /// The quota to set; nil when none is given or it is removed (``removesQuota``).
    var quotaSetting: QuotaSetting? {
        guard let quota, quota != "none" else { return nil }
        let parts = quota.split(separator: "/")
        guard parts.count == 2, let limit = Int(parts[0]) else { return nil }
        return QuotaSetting(limit: limit, period: String(parts[1]))
    }

    var removesQuota: Bool { quota == "none" }

    func validate() throws {
        if let quota, quota != "none", quotaSetting.map({ ["day", "month"].contains($0.period) && $0.limit > 0 }) != true {
            throw ValidationError("--quota is a positive whole number, a slash and day or month (100000/month), or none")
        }
    }
}
