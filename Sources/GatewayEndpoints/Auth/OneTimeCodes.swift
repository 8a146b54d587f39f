import DriverSessions
import GatewayAdmission
import GatewayEdge
import GatewayObservability
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import RateLimit

/// One-time codes with the caps every code has (docs/public-api.md, "Phones and OTPs"),
/// whoever they go to: drivers' OTPs (by phone) and portal members' sign-in codes (by email).
///
/// Sending is limited per subject and per client address in one step (a refusal spends
/// neither). Each code caps its own wrong attempts and its subject's daily failures (``OTPStore``); the
/// client address's failure budget (`rate_limits.otp_verify_failures_per_ip`) caps guessing
/// across subjects. A token is taken before the code is looked at and only a right code gives
/// it back, so concurrent guesses cannot all run before their failures count; over budget even
/// a right code gets 429, and the code is left untouched.
struct OneTimeCodes: Sendable {
    let otps: OTPStore
    let policies: RateLimitPolicies
    let rateLimits: RateLimitGate

    /// Admits a request for a new code to `tag` from `clientIP` (both buckets at once), or
    /// throws the 429; the `RateLimit-*` fields of the answer.
    func admitRequest(tag: String, clientIP: String) async throws -> HTTPFields {
        try await rateLimits.admit(policies.otpTrigger(tag: tag, clientIP: clientIP), policy: .otpTrigger, onStoreError: .failClosed)
    }

    /// A new code from `delivery`, stored as `tag`'s only outstanding one.
    func issue(tag: String, delivery: OTPDelivery) async throws -> String {
        let code = delivery.newCode()
        try await otps.issue(code, tag: tag)
        return code
    }

    /// The answer to a code request, `{"status": <word>, "expires_in": <lifetime>}`: written by
    /// hand so that every subject gets byte-identical answers (Foundation's encoder does not
    /// promise a key order), which is part of not telling a known phone or member from another.
    func requested(_ status: HTTPResponse.Status, _ word: String, headers: HTTPFields) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        let body = "{\"status\":\"\(word)\",\"expires_in\":\(otps.policy.lifetime.components.seconds)}"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// What the codes are called in refusals (`OTP`, `code`) and whose daily budget it is
    /// (`phone`, `email`).
    struct Words: Sendable {
        let code: String
        let subject: String

        static let driver = Words(code: "OTP", subject: "phone")
        static let member = Words(code: "code", subject: "email")
    }

    /// Accepts `code` for `tag` from `clientIP`, or throws the refusal (`INVALID_OTP`,
    /// `OTP_EXPIRED`, `TOO_MANY_OTP_ATTEMPTS`, or the budget's 429). `alongside` runs while the
    /// budget's token is being taken (a read the caller needs whatever the code turns out to
    /// be); its result comes back with the budget, which the caller gives back
    /// (``giveBack(_:logger:)``) while it goes on.
    func accept<T: Sendable>(
        _ code: String, tag: String, clientIP: String, words: Words, alongside: () async -> T
    ) async throws -> (T, budget: RateLimitBucket) {
        let budget = policies.otpVerifyFailures(clientIP: clientIP)
        // Independent steps overlap, so a login storm waits on fewer Redis round trips.
        let budgetTaken = rateLimits.admission([budget], policy: .otpVerify, onStoreError: .failClosed)
        let early = await alongside()
        _ = try await budgetTaken.get()
        let verdict = try await otps.check(code, tag: tag)
        AuthMetrics.otpVerified(verdict.name)
        switch verdict {
        case .accepted:
            return (early, budget)
        case .wrong, .missing:
            throw GatewayError(.unauthorized, "INVALID_OTP", "the \(words.code) is wrong or already used")
        case .expired:
            throw GatewayError(.unauthorized, "OTP_EXPIRED", "the \(words.code) has expired, request a new one")
        case .locked:
            throw GatewayError(.tooManyRequests, "TOO_MANY_OTP_ATTEMPTS", "too many wrong attempts, request a new \(words.code)")
        case .dailyLimitReached:
            throw GatewayError(.tooManyRequests, "TOO_MANY_OTP_ATTEMPTS", "too many failed attempts for this \(words.subject) today, try again later")
        }
    }

    /// Returns a right code's token to the address's failure budget. Failing to only leaves
    /// the address one failure poorer, so the caller goes on.
    func giveBack(_ budget: RateLimitBucket, logger: Logger) async {
        do {
            try await rateLimits.limiter.refund(budget)
        } catch {
            logger.warning("otp verify budget refund failed", metadata: ["error": .string("\(error)")])
        }
    }
}
