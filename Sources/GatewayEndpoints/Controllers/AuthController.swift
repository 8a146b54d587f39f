import DriverSessions
import DriverTokens
import GatewayAdmission
import GatewayEdge
import GatewayObservability
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import RateLimit

/// Direct OTP login (docs/public-api.md): trigger, verify, refresh, logout.
///
/// Every Redis failure on these paths fails closed (`503 SERVICE_UNAVAILABLE`, through
/// `ErrorMiddleware`), and registered and unregistered phones get the same responses: nothing
/// here looks the user up before the OTP is accepted.
struct AuthController {
    let otps: OTPStore
    let sessions: SessionStore
    let issuer: TokenIssuer
    let bearer: BearerAuthenticator
    let delivery: OTPDelivery
    let hasher: PhoneHasher
    let clientAddress: ClientAddress
    let policies: RateLimitPolicies
    let rateLimits: RateLimitGate
    /// Which callers are web apps (`web.allowed_origins`).
    let cors: CORSPolicy
    let logger: Logger

    var codes: OneTimeCodes { OneTimeCodes(otps: otps, policies: policies, rateLimits: rateLimits) }

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.post("/auth/otp/trigger", use: trigger)
        router.post("/auth/otp/verify", use: verify)
        router.post("/auth/token/refresh", use: refresh)
        router.post("/auth/logout", use: logout)
    }

    /// Rate limited per phone and per client IP in one step; a refusal spends neither (on
    /// Redis Cluster, where the two are checked in turn, the phone's may be spent).
    @Sendable func trigger(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(OTPTriggerRequest.self, from: request, context: context)
        let phone = try AuthInput.phone(body.phone)
        let clientIP = clientAddress.resolve(peer: context.peerAddress, headers: request.headers) ?? "unknown"
        let tag = hasher.tag(for: phone)
        let limitHeaders = try await codes.admitRequest(tag: tag, clientIP: clientIP)
        let code = try await codes.issue(tag: tag, delivery: delivery)
        try await delivery.deliver(code, to: phone, requestLogger: context.logger)
        AuthMetrics.otpSent(mode: delivery.modeName)
        context.logger.info("otp sent", metadata: ["phone": .string(phone.masked)])
        return codes.requested(.ok, "sent", headers: limitHeaders)
    }

    /// The code is checked with every cap of ``OneTimeCodes``; the phone's owner is read while the
    /// address's budget is taken, and the budget's token goes back while the session opens.
    @Sendable func verify(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(OTPVerifyRequest.self, from: request, context: context)
        let phone = try AuthInput.phone(body.phone)
        let code = try AuthInput.otp(body.otp)
        let clientIP = clientAddress.resolve(peer: context.peerAddress, headers: request.headers) ?? "unknown"
        let (owner, budget) = try await codes.accept(code, tag: hasher.tag(for: phone), clientIP: clientIP, words: .driver) {
            try? await sessions.owner(of: phone)
        }
        async let refunded: Void = codes.giveBack(budget, logger: context.logger)
        let session = try await sessions.open(phone: phone, channel: .otp, owner: owner)
        await refunded
        context.logger.info("otp login", metadata: ["phone": .string(phone.masked), "user_id": .string(session.userID), "session": .string(session.refreshToken.familyID)])
        return try await issuer.pair(
            userID: session.userID, refreshToken: session.refreshToken, channel: .otp,
            isNewUser: session.isNewUser, revokedBefore: session.revokedBefore
        ).response(cookieMaxAge: cookieMaxAge(WebCall(request.headers, cors: cors)))
    }

    /// Single use: the presented token is spent and its successor issued in one Redis step.
    /// A retry of the same token within `tokens.refresh_reuse_interval` (a lost answer, or
    /// concurrent refreshes) gets that same successor and a new access token of the session.
    @Sendable func refresh(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let web = WebCall(request.headers, cors: cors)
        // Empty is a web refresh's body; without an `Origin` it still lacks its token (WebCall).
        let body = try await JSONBody.decode(RefreshRequest.self, from: request, context: context, allowEmpty: true)
        let presented: RefreshToken
        do {
            presented = try AuthInput.refreshToken(web.refreshToken(body: body.refreshToken))
        } catch {
            RefreshMetrics.refreshed(.refused)
            throw error
        }
        // Read before rotating: a revocation that lands while this refresh runs (say, the
        // reuse detected by a concurrent refresh) is not one that was cut short.
        let listedAsRevoked = bearer.revocations.isSessionRevoked(presented.familyID)
        let rotation = try await sessions.rotate(presented)
        switch rotation {
        case .rotated(let userID, let channel, let refreshToken), .retried(let userID, let channel, let refreshToken):
            if listedAsRevoked {
                return try await refuseRevokedSession(refreshToken.familyID)
            }
            if case .retried = rotation {
                RefreshMetrics.refreshed(.retried)
                logger.info("refresh retried within the reuse interval", metadata: ["user_id": .string(userID), "session": .string(refreshToken.familyID)])
            } else {
                RefreshMetrics.refreshed(.rotated)
            }
            return try await issuer.pair(userID: userID, refreshToken: refreshToken, channel: channel, isNewUser: false)
                .response(cookieMaxAge: cookieMaxAge(web))
        case .reused(let userID, let sessionID):
            RefreshMetrics.refreshed(.reused)
            AuthMetrics.sessionsRevoked("reuse")
            bearer.revocations.noteSessionRevoked(sessionID)
            context.logger.warning("refresh token reused: session revoked", metadata: ["user_id": .string(userID), "session": .string(sessionID)])
            throw AuthInput.invalidRefreshToken
        case .refused:
            RefreshMetrics.refreshed(.refused)
            throw AuthInput.invalidRefreshToken
        }
    }

    /// A session every instance lists as revoked whose family still rotated: a revocation
    /// whose later steps were cut short. Completing it (its steps are idempotent) ends the
    /// family too; the caller gets what any revoked session gets.
    private func refuseRevokedSession(_ sessionID: String) async throws -> Response {
        try await sessions.completeRevocation(ofSession: sessionID)
        RefreshMetrics.refreshed(.refused)
        logger.warning("refresh of a session listed as revoked: revocation completed", metadata: ["session": .string(sessionID)])
        throw AuthInput.invalidRefreshToken
    }

    /// Revokes the access token's session (and so the access token), plus the presented
    /// refresh token's session when it is the same user's.
    @Sendable func logout(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let web = WebCall(request.headers, cors: cors)
        let claims = try await bearer.authenticate(request.headers)
        let body = try await JSONBody.decode(LogoutRequest.self, from: request, context: context, allowEmpty: true)
        let presented: RefreshToken?
        if let text = try web.logoutToken(body: body.refreshToken) {
            guard let token = RefreshToken(parsing: text) else {
                throw GatewayError.invalidRequest("refresh_token must be 64 lowercase hex characters")
            }
            presented = token
        } else {
            presented = nil
        }
        let revoked = try await sessions.logout(userID: claims.userID, sessionID: claims.sessionID, refreshToken: presented)
        bearer.revocations.noteSessionRevoked(claims.sessionID)
        if revoked > 1, let presented { bearer.revocations.noteSessionRevoked(presented.familyID) }
        AuthMetrics.sessionsRevoked("logout", count: revoked)
        context.logger.info("logout", metadata: ["user_id": .string(claims.userID), "session": .string(claims.sessionID)])
        // A web app's cookie goes with its login, whichever token the logout named.
        return Response(status: .noContent, headers: web.isWeb ? [.setCookie: RefreshCookie.clearing] : [:])
    }

    /// A web call's cookie lives as long as its refresh token (`tokens.refresh_ttl`); nil:
    /// not a web call, the token goes in the body.
    private func cookieMaxAge(_ web: WebCall) -> Int? {
        web.isWeb ? Int(sessions.refreshTTL.components.seconds) : nil
    }
}
