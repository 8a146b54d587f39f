import Foundation
import GatewayConfiguration
import GatewayPrimitives
import GatewayContract
import GatewayEdge
import KeyRegistry

/// Input rules of `allowed_cidrs` and `quota` (docs/admin-api.md).
extension AdminValidation {
    /// At most 64 IPv4 or IPv6 ranges (`203.0.113.0/24`, `2001:db8::/32`, a bare address).
    static func allowedCIDRs(_ texts: [String]?) throws -> NetworkAllowlist? {
        guard let texts else { return nil }
        guard texts.count <= 64 else { throw GatewayError.invalidRequest("allowed_cidrs holds at most 64 ranges") }
        var networks: [CIDR] = []
        for text in texts {
            guard let network = CIDR(text.trimmingCharacters(in: .whitespaces)) else {
                throw GatewayError.invalidRequest("allowed_cidrs: \"\(text.prefix(64))\" is not an IPv4 or IPv6 address or CIDR range")
            }
            if !networks.contains(network) { networks.append(network) }
        }
        return NetworkAllowlist(networks)
    }

    /// A quota's change: nil to leave it, `.some(nil)` to remove it. The limit is 1 to 10^12.
    static func quota(_ setting: QuotaSetting?, removes: Bool) throws -> Quota?? {
        if removes { return .some(nil) }
        guard let setting else { return nil }
        guard let period = Quota.Period(rawValue: setting.period) else {
            throw GatewayError.invalidRequest("quota.period is day or month")
        }
        guard (1...1_000_000_000_000).contains(setting.limit) else {
            throw GatewayError.invalidRequest("quota.limit is a whole number from 1 to 1000000000000")
        }
        return .some(Quota(limit: setting.limit, period: period))
    }
}
