import Foundation
import GatewayConfiguration
import GatewayPrimitives
import GatewayContract
import GatewayEdge
import Hummingbird
import KeyRegistry

/// Input rules of `allowed_cidrs` and `quota` (docs/admin-api.md).
extension AdminValidation {
    /// At most 64 IPv4 or IPv6 ranges (`203.0.113.0/24`, `2001:db8::/32`, a bare address).
    static func allowedCIDRs(_ texts: [String]?) throws -> NetworkAllowlist? {
        guard let texts else { return nil }
        guard texts.count <= AdminInputRules.maximumAllowedCIDRs else {
            throw GatewayError.invalidRequest("allowed_cidrs holds at most \(AdminInputRules.maximumAllowedCIDRs) ranges")
        }
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
        if let problem = AdminInputRules.quotaProblem(setting) { throw GatewayError.invalidRequest(problem) }
        guard let period = Quota.Period(rawValue: setting.period) else { throw GatewayError.invalidRequest("quota.period is day or month") }
        return .some(Quota(limit: setting.limit, period: period))
    }
}

/// Input rules of what a state file sets on creation and `If-Match`.
extension AdminValidation {
    /// A partner's `status`: `active` or `disabled`.
    static func partnerStatus(_ text: String?) throws -> Partner.Status? {
        guard let text else { return nil }
        guard let status = Partner.Status(rawValue: text) else { throw GatewayError.invalidRequest("status is active or disabled") }
        return status
    }

    /// When a new key or credential expires: `expires_in` from now or `expires_at`, not both;
    /// in the future and within 36500 days.
    static func expiry(in text: String?, at date: Date?, now: Date) throws -> Date? {
        if text != nil, date != nil { throw GatewayError.invalidRequest("give expires_in or expires_at, not both") }
        if let lifetime = try duration(text, field: "expires_in") {
            guard lifetime > .zero else { throw GatewayError.invalidRequest("expires_in must be greater than 0") }
            return now.addingTimeInterval(lifetime.inSeconds)
        }
        guard let date else { return nil }
        guard date > now, date.timeIntervalSince(now) <= GatewayDuration.longest.timeInterval else {
            throw GatewayError.invalidRequest("expires_at must be in the future and within 36500d")
        }
        return date
    }

    /// `If-Match: "<revision>"`: the revision the change was made against, or nil for none
    /// (or `*`).
    static func expectedRevision(_ request: Request) throws -> Int? {
        guard let header = request.headers[.ifMatch] else { return nil }
        guard let expected = RevisionPrecondition.expectedRevision(header) else {
            throw GatewayError.invalidRequest("If-Match is the resource's revision in quotes (\"3\") or *")
        }
        return expected
    }
}
