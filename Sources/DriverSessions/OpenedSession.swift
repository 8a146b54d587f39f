import DriverTokens
import Foundation

/// A login that just began: its user and the first refresh token of its family.
public struct OpenedSession: Sendable {
    public let userID: String
    /// `is_new_user`: on OTP, whether this login created the user; on the partner SDK
    /// channel, whether this is the partner's first enrolment of the driver.
    public let isNewUser: Bool
    /// The family's first token. Hand it to the client once; Redis holds only its hash.
    public let refreshToken: RefreshToken
    /// When an admin last revoked every session of the user, if ever: an access token whose
    /// `iat` is not after it counts as revoked, so the caller must not sign one in that
    /// second (see ``SessionRevocations/earliestIssueTime(for:after:)``).
    public let revokedBefore: Date?
}
