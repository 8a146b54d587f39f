import GatewayPrimitives
import RedisClient

/// One-time passwords in Redis: stored only as keyed digests, checked and counted in one
/// atomic step each (``SessionScripts/storeOTP``, ``SessionScripts/checkOTP``).
public struct OTPStore: Sendable {
    let redis: RedisConnectionPool
    let hasher: PhoneHasher
    public let policy: OTPPolicy

    public init(redis: RedisConnectionPool, hasher: PhoneHasher, policy: OTPPolicy) {
        self.redis = redis
        self.hasher = hasher
        self.policy = policy
    }

    /// A fresh 6-digit code, uniform over 000000...999999, from the kernel's CSPRNG.
    public static func generateCode() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = UInt32.random(in: 0..<1_000_000, using: &generator)
        let digits = String(value)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// Stores `code` as the phone's only outstanding OTP, replacing any earlier one.
    public func issue(_ code: String, for phone: PhoneNumber) async throws {
        try await issue(code, tag: hasher.tag(for: phone))
    }

    /// Checks `code` against the phone's outstanding OTP and counts the attempt.
    public func check(_ code: String, for phone: PhoneNumber) async throws -> OTPVerdict {
        try await check(code, tag: hasher.tag(for: phone))
    }

    /// Stores `code` as the only outstanding code of whoever `tag` names (a phone's
    /// ``PhoneHasher/tag(for:)``, a portal member's ``PhoneHasher/tag(forEmail:)``): the same
    /// lifetime, attempt caps and failure budget for every kind.
    public func issue(_ code: String, tag: String) async throws {
        _ = try await redis.run(
            SessionScripts.storeOTP,
            keys: [SessionKeys.otp(tag)],
            arguments: [hasher.otpDigest(code: code, phoneTag: tag), String((policy.lifetime + policy.retention).inMilliseconds)]
        )
    }

    /// Checks `code` against the outstanding code of whoever `tag` names and counts the attempt.
    public func check(_ code: String, tag: String) async throws -> OTPVerdict {
        let reply = try await redis.run(
            SessionScripts.checkOTP,
            keys: [SessionKeys.otp(tag), SessionKeys.otpFailures(tag)],
            arguments: [
                hasher.otpDigest(code: code, phoneTag: tag),
                String(policy.lifetime.inMilliseconds),
                String(policy.maxAttempts),
                String(policy.maxFailuresPerWindow),
                String(policy.failureWindow.inMilliseconds),
            ]
        )
        guard let parts = reply.array, parts.count == 2, let verdict = parts[0].string else {
            throw RedisError.protocolViolation("otp-check returned \(reply)")
        }
        switch verdict {
        case "accepted": return .accepted
        case "wrong": return .wrong(attemptsLeft: Int(parts[1].int ?? 0))
        case "locked": return .locked
        case "expired": return .expired
        case "missing": return .missing
        case "daily_limit": return .dailyLimitReached
        default: throw RedisError.protocolViolation("otp-check returned \(verdict)")
        }
    }
}
