/// The Redis keyspace of drivers: users, sessions, refresh tokens and OTPs.
///
/// Each key carries the hash tag of the entity it belongs to: a phone digest `{N}`, a user
/// `{U}` or a login session (refresh-token family) `{F}`. Every name is made here and passed
/// to the Lua scripts in KEYS; no script builds one (Redis Cluster routes by KEYS).
enum SessionKeys {
    /// String: the user id of the phone with digest N.
    static func phone(_ tag: String) -> String { "pg:phone:{\(tag)}" }
    /// Hash: digest, created_at (ms), attempts. Lives the OTP's TTL plus ``OTPPolicy/retention``.
    static func otp(_ tag: String) -> String { "pg:otp:{\(tag)}" }
    /// String: failed verifications of the phone in the current window.
    static func otpFailures(_ tag: String) -> String { "pg:otpfail:{\(tag)}" }
    /// Hash: phone (masked), phone_tag (the phone's digest, for erasure), created_at,
    /// revoked_before, and per partner `driver_id:<partner>` and `name:<partner>`. (A `name`
    /// field written by older gateways is never read.)
    static func user(_ id: String) -> String { "pg:user:{\(id)}" }
    /// Set: the user's login sessions (family ids), for "revoke every session".
    static func userSessions(_ id: String) -> String { "pg:user:{\(id)}:sessions" }
    /// Hash: state (`active`, `used`, `revoked`); whose it is is the family's `user`. Expires
    /// with the token.
    static func refreshToken(family: String, hash: String) -> String { "pg:rt:{\(family)}:\(hash)" }
    /// Hash: user, state (`active`, `revoked`), current (token hash), previous (hash of the
    /// token spent to make `current`), channel, partner, created_at, refreshed_at (ms).
    static func family(_ id: String) -> String { "pg:rtfam:{\(id)}" }
    /// Sorted set: the hashes of the family's spent refresh tokens (the newest
    /// ``SessionStore/spentTokensKept``), scored by when their records expire (ms), so erasure
    /// finds the records `current` and `previous` no longer name, and a spent token is reuse
    /// after its record expired.
    static func spentTokens(family id: String) -> String { "pg:rtfam:{\(id)}:spent" }
    /// Sorted set: revoked family ids by revocation time (ms); trimmed past the access TTL.
    /// A revocation still being carried out has ``pendingRevocationScore`` instead.
    static let revokedSessions = "pg:revoked-sessions"
    /// The score of a session revocation whose family step has not been confirmed yet: far
    /// beyond any trim, so the entry stays until the revocation is complete (year 33658).
    static let pendingRevocationScore = "1000000000000000"
    /// Sorted set: user ids by their `revoked_before` time (ms); trimmed past the access TTL.
    static let revokedUsers = "pg:revoked-users"
    /// The pub/sub channel every gateway instance listens on (shared with KeyRegistry).
    static let invalidationChannel = "pg:invalidate"
}
