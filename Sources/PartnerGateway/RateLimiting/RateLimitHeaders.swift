import HTTPTypes
import RateLimit

/// The `RateLimit-*` headers (IETF draft "RateLimit header fields for HTTP") describing the
/// tightest bucket of a decision, plus `Retry-After` on a refusal.
enum RateLimitHeaders {
    static func fields(for decision: RateLimitDecision) -> HTTPFields {
        var fields = HTTPFields()
        guard let bucket = decision.tightest else { return fields }
        fields[.rateLimitLimit] = String(bucket.limit.capacity)
        fields[.rateLimitRemaining] = String(bucket.remaining)
        fields[.rateLimitReset] = String(wholeSeconds(bucket.secondsUntilFull))
        if !decision.allowed {
            fields[.retryAfter] = String(max(1, wholeSeconds(decision.secondsUntilAllowed)))
        }
        return fields
    }

    /// Seconds rounded up; "never" (a bucket that does not refill) is capped at a day.
    static func wholeSeconds(_ seconds: Double) -> Int {
        guard seconds.isFinite else { return 86_400 }
        return Int(seconds.rounded(.up))
    }
}

extension HTTPField.Name {
    static let rateLimitLimit = HTTPField.Name("RateLimit-Limit")!
    static let rateLimitRemaining = HTTPField.Name("RateLimit-Remaining")!
    static let rateLimitReset = HTTPField.Name("RateLimit-Reset")!
}
