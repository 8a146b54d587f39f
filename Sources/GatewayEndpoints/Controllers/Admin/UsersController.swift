import DriverSessions
import DriverTokens
import Foundation
import GatewayAdmission
import GatewayContract
import GatewayEdge
import GatewayObservability
import GatewayProxy
import Hummingbird
import RedisClient

/// Drivers and their sessions, for support staff (`gatewayctl users` and `sessions`):
/// find a user by phone, list their live sessions, end one session or all of them, erase
/// them. Every call is audited, lookups included: they reveal who a phone number belongs to.
/// Lookups name the driver by ``UserPseudonym``, changes by the user id (docs/admin-api.md,
/// "Erasure").
struct UsersController {
    let sessions: SessionStore
    let revocations: SessionRevocations
    let audit: AdminAudit
    let pseudonym: UserPseudonym
    /// For the rate-limit buckets an erasure deletes.
    let redis: RedisConnectionPool
    /// The configured routes' names: each may have a per-user bucket.
    let routeNames: [String]

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("users/find", use: find)
        group.get("users/:user/sessions", use: list)
        group.post("users/:user/sessions/:session/revoke", use: revokeSession)
        group.post("users/:user/revoke-sessions", use: revokeSessions)
        group.post("users/:user/erase", use: erase)
    }

    /// The phone travels in the body, never in the URL, so no access log or proxy sees it;
    /// it is hashed exactly as at login. The audit log records it masked, and the user found by
    /// their pseudonym.
    @Sendable func find(_ request: Request, context: GatewayRequestContext) async throws -> FoundUser {
        let body = try await JSONBody.decode(PhoneQuery.self, from: request, context: context)
        let phone = try AuthInput.phone(body.phone)
        let user = try await sessions.findUser(phone: phone)
        try await audit.record("users.find", target: user.map { pseudonym.name(of: $0.userID) } ?? phone.masked, request: request, context: context)
        guard let user else { throw GatewayError.notFound(what: "user") }
        return FoundUser(userID: user.userID, phone: user.maskedPhone, createdAt: user.createdAt, liveSessions: user.liveSessions)
    }

    /// Paged like every admin list (newest login first, the session id as the cursor).
    @Sendable func list(_ request: Request, context: GatewayRequestContext) async throws -> Page<LoginSession> {
        let userID = try AdminValidation.id(context.parameters.get("user") ?? "", prefix: "usr_")
        let pageRequest = try AdminValidation.page(request, defaultLimit: PageRequest.defaultLimit)
        guard let live = try await sessions.sessions(ofUser: userID) else { throw GatewayError.notFound(what: "user") }
        try await audit.record("sessions.list", target: pseudonym.name(of: userID), request: request, context: context)
        let all = live.sorted { ($0.createdAt, $0.sessionID) > ($1.createdAt, $1.sessionID) }.map {
            LoginSession(
                sessionID: $0.sessionID, channel: $0.channel, partnerID: $0.partnerID,
                createdAt: $0.createdAt, lastRefreshedAt: $0.lastRefreshedAt, expiresAt: $0.expiresAt
            )
        }
        guard let page = Page.slice(all, pageRequest, cursor: \.sessionID) else {
            throw GatewayError.invalidRequest("no session \(pageRequest.after ?? "") to continue after")
        }
        return page
    }

    /// One session ends as at logout: its refresh tokens at once, its access tokens on every
    /// instance as soon as the published revocation arrives (well within 1 s).
    @Sendable func revokeSession(_ request: Request, context: GatewayRequestContext) async throws -> RevokedSession {
        let userID = try AdminValidation.id(context.parameters.get("user") ?? "", prefix: "usr_")
        let sessionID = context.parameters.get("session") ?? ""
        guard try await sessions.revokeSession(sessionID, ofUser: userID) else { throw GatewayError.notFound(what: "session") }
        let revokedAt = Date()
        revocations.noteSessionRevoked(sessionID, at: revokedAt)
        AuthMetrics.sessionsRevoked("admin")
        try await audit.record("session.revoke", target: "\(userID)/\(sessionID)", request: request, context: context)
        return RevokedSession(userID: userID, sessionID: sessionID, revokedAt: revokedAt)
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
        try await audit.record("sessions.revoke", target: userID, request: request, context: context)
        return SessionRevocation(userID: userID, revokedAt: revokedAt)
    }

    /// Everything keyed by the driver goes (docs/admin-api.md, "Erasure"), their stored
    /// `Idempotency-Key` answers too; the audit trail keeps the id in its entries of changes.
    /// The phone's next login is a new user.
    @Sendable func erase(_ request: Request, context: GatewayRequestContext) async throws -> ErasedUser {
        let userID = try AdminValidation.id(context.parameters.get("user") ?? "", prefix: "usr_")
        let (redis, routeNames) = (redis, routeNames)
        // Before the user record goes: a failure until then leaves a user to erase again.
        let erasure = try await sessions.erase(userID: userID) { phoneTag in
            let buckets = RateLimitPolicies.erasableBucketKeys(userID: userID, phoneTag: phoneTag, routes: routeNames)
            // One slot per bucket: deleted one by one (Redis Cluster refuses a multi-slot DEL).
            for bucket in buckets { _ = try await redis.send(.del([bucket])) }
            try await IdempotencyUserIndex.erase(userID: userID, redis: redis)
        }
        guard let erased = erasure else { throw GatewayError.notFound(what: "user") }
        for session in erased.sessions { revocations.noteSessionRevoked(session, at: erased.erasedAt) }
        AuthMetrics.sessionsRevoked("admin")
        try await audit.record("user.erase", target: userID, request: request, context: context)
        return ErasedUser(userID: userID, erasedAt: erased.erasedAt)
    }
}
