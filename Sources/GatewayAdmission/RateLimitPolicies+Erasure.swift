import RateLimit

extension RateLimitPolicies {
    /// The Redis keys of every bucket that names a user or their phone's digest: the OTP
    /// trigger bucket of the phone and each route's per-user bucket (`routes`: route names).
    /// Erasing a driver deletes them; they hold counts only, but their names are the driver's.
    package static func erasableBucketKeys(userID: String, phoneTag: String?, routes: [String]) -> [String] {
        var names = routes.map { routeBucket($0, subject: userSubject(userID)) }
        if let phoneTag { names.append(otpPhoneBucket(phoneTag)) }
        return names.map { RedisRateLimiter.keyPrefix + "{\($0)}" }
    }
}
