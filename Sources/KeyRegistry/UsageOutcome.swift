/// How one call with a known key ended, as usage counts it: each is a field of the key's day in
/// Redis and of the usage report (docs/admin-api.md). An admitted call counts as `allowed` and
/// once more by its response's class.
public enum UsageOutcome: String, Sendable, Hashable, CaseIterable {
    case allowed
    /// Refused for the key itself: a scope it lacks, a disabled partner, an address not allowed.
    case refusedAuth = "refused_auth"
    case refusedLimit = "refused_limit"
    case refusedQuota = "refused_quota"
    case upstream2xx = "upstream_2xx"
    case upstream4xx = "upstream_4xx"
    case upstream5xx = "upstream_5xx"

    /// The class of an upstream's response status; nil for 1xx and 3xx, which usage does not count.
    public static func upstream(status: Int) -> UsageOutcome? {
        switch status {
        case 200..<300: .upstream2xx
        case 400..<500: .upstream4xx
        case 500..<600: .upstream5xx
        default: nil
        }
    }
}
