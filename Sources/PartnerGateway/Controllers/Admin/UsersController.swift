import DriverSessions
import Foundation
import GatewayContract
import Hummingbird

/// Drivers' sessions: `POST /v1/users/{user_id}/revoke-sessions` (`gatewayctl sessions revoke`).
struct UsersController {
    let sessions: SessionStore
    let revocations: SessionRevocations
    let audit: AdminAudit

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("users/:user/revoke-sessions", use: revokeSessions)
    }

    /// Every refresh token of the user dies at once; every access token issued up to now
    /// dies on every instance as soon as the published marker arrives (well within 1 s).
    @Sendable func revokeSessions(_ request: Request, context: GatewayRequestContext) async throws -> SessionRevocation {
        let userID = context.parameters.get("user") ?? ""
        guard let revokedAt = try await sessions.revokeAllSessions(ofUser: userID) else {
            throw GatewayError.notFound(what: "user")
        }
        revocations.noteUserRevoked(userID, at: revokedAt)
        AuthMetrics.sessionsRevoked("admin")
        await audit.record("sessions.revoke", target: userID, request: request, context: context)
        return SessionRevocation(userID: userID, revokedAt: revokedAt)
    }
}
