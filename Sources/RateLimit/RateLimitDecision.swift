/// What the limiter decided for one request, and the state of every bucket it checked.
public struct RateLimitDecision: Sendable, Hashable {
    /// The state of one bucket after the decision.
    public struct BucketState: Sendable, Hashable {
        public var limit: TokenBucket
        /// Whole tokens left (what `RateLimit-Remaining` reports).
        public var remaining: Int
        /// Seconds until the bucket is full again (what `RateLimit-Reset` reports).
        public var secondsUntilFull: Double
        /// A quota (``RateLimitBucket/quota(key:limit:periodEnd:)``): `secondsUntilFull` is
        /// the time to the start of the next period.
        public var isQuota = false

        public init(limit: TokenBucket, remaining: Int, secondsUntilFull: Double, isQuota: Bool = false) {
            self.limit = limit
            self.remaining = remaining
            self.secondsUntilFull = secondsUntilFull
            self.isQuota = isQuota
        }
    }

    public var allowed: Bool
    /// When refused: seconds until every refusing bucket has a token again (infinite when a
    /// bucket never refills). Zero when allowed.
    public var secondsUntilAllowed: Double
    /// In the order the buckets were asked for.
    public var buckets: [BucketState]

    public init(allowed: Bool, secondsUntilAllowed: Double, buckets: [BucketState]) {
        self.allowed = allowed
        self.secondsUntilAllowed = secondsUntilAllowed
        self.buckets = buckets
    }

    /// No bucket to check: allowed, with nothing to report.
    public static let unlimited = RateLimitDecision(allowed: true, secondsUntilAllowed: 0, buckets: [])

    /// Whether a quota refused the request (whatever else did too).
    public var exceededQuota: Bool {
        !allowed && buckets.contains { $0.isQuota && $0.remaining == 0 }
    }

    /// The bucket the client is closest to exhausting: the one the `RateLimit-*` headers
    /// describe when several apply (the IETF draft's "closest to its limit").
    public var tightest: BucketState? {
        buckets.min { lhs, rhs in
            if lhs.remaining != rhs.remaining { return lhs.remaining < rhs.remaining }
            return lhs.secondsUntilFull > rhs.secondsUntilFull
        }
    }
}
