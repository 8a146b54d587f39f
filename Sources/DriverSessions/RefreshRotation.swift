import DriverTokens

/// What presenting a refresh token did.
public enum RefreshRotation: Sendable {
    /// The token was spent and `successor` stored in its place, in the same session.
    case rotated(userID: String, channel: AccessTokenChannel, successor: RefreshToken)
    /// The token was the session's immediate predecessor, spent within the reuse interval:
    /// a retry after a lost answer, or one of several concurrent refreshes. `current` is the
    /// successor it already produced, still the session's live token; nothing changed.
    case retried(userID: String, channel: AccessTokenChannel, current: RefreshToken)
    /// The token had already been spent: it was copied, so its whole session is now revoked.
    case reused(userID: String, sessionID: String)
    /// Unknown, expired, revoked, or its session is revoked: nothing changed.
    case refused
}
