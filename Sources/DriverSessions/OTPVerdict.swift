/// What checking a presented OTP decided (each maps to one response in docs/public-api.md).
public enum OTPVerdict: Sendable, Hashable {
    /// The code was right; the OTP is spent.
    case accepted
    /// The code was wrong; this many attempts remain on the OTP.
    case wrong(attemptsLeft: Int)
    /// The OTP has had its wrong attempts (this one may have been the last): until a new
    /// trigger, every try is refused.
    case locked
    /// The OTP is older than its lifetime.
    case expired
    /// No OTP is outstanding for the phone (never sent, already used, or long gone).
    case missing
    /// The phone has spent its daily budget of failed verifications.
    case dailyLimitReached

    /// The metric label of the verdict.
    public var name: String {
        switch self {
        case .accepted: "accepted"
        case .wrong: "wrong"
        case .locked: "locked"
        case .expired: "expired"
        case .missing: "missing"
        case .dailyLimitReached: "daily_limit"
        }
    }
}
