import DriverSessions
import DriverTokens
import Foundation

/// Signs the access token of a session and pairs it with the session's refresh token.
///
/// It waits out the one second in which a fresh token would look revoked: `iat` has whole
/// seconds, and a user's "revoked before" marker refuses every token whose `iat` falls in
/// the second of the revocation (see ``SessionRevocations/isRevoked(userID:sessionID:issuedAt:)``).
/// Only a login in the very second after an admin revoked the user ever waits.
package struct TokenIssuer: Sendable {
    let signer: AccessTokenSigner
    let revocations: SessionRevocations

    package init(signer: AccessTokenSigner, revocations: SessionRevocations) {
        self.signer = signer
        self.revocations = revocations
    }

    func pair(
        userID: String,
        refreshToken: RefreshToken,
        channel: AccessTokenChannel,
        isNewUser: Bool,
        revokedBefore: Date? = nil
    ) async throws -> TokenPair {
        let earliest = revocations.earliestIssueTime(for: userID, after: revokedBefore)
        let wait = earliest.timeIntervalSinceNow
        if wait > 0 {
            try await Task.sleep(for: .milliseconds(Int64((wait * 1000).rounded(.up)) + 1))
        }
        let access = try await signer.sign(userID: userID, sessionID: refreshToken.familyID, channel: channel, now: max(Date(), earliest))
        return TokenPair(access: access, refreshToken: refreshToken, userID: userID, isNewUser: isNewUser, expiresIn: Int(signer.timeToLive))
    }
}
