/// The OTP rules (docs/public-api.md, "Phones and OTPs"), from the `otp` section of the configuration.
public struct OTPPolicy: Sendable {
    /// How long a code is valid (`otp.ttl`, 10 minutes).
    public var lifetime: Duration
    /// Wrong attempts that lock one code (`otp.max_attempts`, 5).
    public var maxAttempts: Int
    /// Failed verifications per phone per ``failureWindow`` (`otp.max_failures_per_day`, 20).
    public var maxFailuresPerWindow: Int
    /// The failure budget's window: it starts at the first failure and lasts a day.
    public var failureWindow: Duration
    /// How long an expired OTP's record is kept, so that a late verify answers
    /// `OTP_EXPIRED` (the code is right but old) rather than `INVALID_OTP` (no code).
    public var retention: Duration

    public init(
        lifetime: Duration = .seconds(600),
        maxAttempts: Int = 5,
        maxFailuresPerWindow: Int = 20,
        failureWindow: Duration = .seconds(86_400),
        retention: Duration = .seconds(3_600)
    ) {
        self.lifetime = lifetime
        self.maxAttempts = maxAttempts
        self.maxFailuresPerWindow = maxFailuresPerWindow
        self.failureWindow = failureWindow
        self.retention = retention
    }
}
