import HTTPTypes
import RateLimit

/// The `RateLimit-*` headers (IETF draft "RateLimit header fields for HTTP") describing the
/// tightest bucket of a decision, plus `Retry-After` on a refusal.
package enum RateLimitHeaders {
    /// Appended rather than set: each name is new to the fields, and setting one looks it up
    /// first (this runs for every request on a rate-limited route).
    package static func fields(for decision: RateLimitDecision) -> HTTPFields {
        var fields = HTTPFields()
        guard let bucket = decision.tightest else { return fields }
        fields.reserveCapacity(decision.allowed ? 3 : 4)
        fields.append(HTTPField(name: .rateLimitLimit, value: String(bucket.limit.capacity)))
        fields.append(HTTPField(name: .rateLimitRemaining, value: String(bucket.remaining)))
        fields.append(HTTPField(name: .rateLimitReset, value: String(wholeSeconds(bucket.secondsUntilFull))))
        if !decision.allowed {
            fields.append(HTTPField(name: .retryAfter, value: String(max(1, wholeSeconds(decision.secondsUntilAllowed)))))
        }
        return fields
    }

    /// Seconds rounded up; "never" (a bucket that does not refill) is capped at a day.
    package static func wholeSeconds(_ seconds: Double) -> Int {
        guard seconds.isFinite else { return 86_400 }
        return Int(seconds.rounded(.up))
    }
}

extension HTTPField.Name {
    package static let rateLimitLimit = HTTPField.Name("RateLimit-Limit")!
    package static let rateLimitRemaining = HTTPField.Name("RateLimit-Remaining")!
    package static let rateLimitReset = HTTPField.Name("RateLimit-Reset")!
}
