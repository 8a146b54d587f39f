import DriverSessions
import GatewayAdmission
import GatewayConfiguration
import GatewayEdge
import GatewayObservability
import GatewayProxy
import Hummingbird
import KeyRegistry
import Logging
import RedisClient

/// What the gateway's endpoints are built from: the services the composition builds once and
/// every listener shares (`GatewayDependencies` in PartnerGateway). A protocol, so this library
/// needs nothing of how they are made.
package protocol EndpointDependencies: Sendable {
    var config: GatewayConfig { get }
    var logger: Logger { get }
    var redis: RedisConnectionPool { get }
    var registry: KeyRegistry { get }
    var keyVerifier: KeyVerifier { get }
    var auditLog: AuditLog { get }
    var admins: AdminRegistry { get }
    /// Partners' members and their portal sessions.
    var members: MemberRegistry { get }
    var memberSessions: MemberSessions { get }
    /// How portal sign-in codes go out (`portal.delivery`).
    var portalDelivery: OTPDelivery { get }
    /// The portal's pages, when `portal.enabled`.
    var portalSite: PortalSite? { get }
    var clientAddress: ClientAddress { get }
    var apiKeys: APIKeyAuthenticator { get }
    var quotaCalendar: QuotaCalendar { get }
    var policies: RateLimitPolicies { get }
    var rateLimitGate: RateLimitGate { get }
    var phoneHasher: PhoneHasher { get }
    var otps: OTPStore { get }
    var otpDelivery: OTPDelivery { get }
    var sessions: SessionStore { get }
    var revocations: SessionRevocations { get }
    var tokenIssuer: TokenIssuer { get }
    var bearer: BearerAuthenticator { get }
    var assertions: AssertionSigner { get }
    var accessLog: AccessLogWriter? { get }
    var tracing: RequestTracing? { get }
    /// Whether Redis is usable (`/readyz`).
    var readiness: RedisReadiness { get }
}

/// The public listener's router: health, JWKS, the partner API, SDK tokens, drivers' logins
/// and, when enabled, the partner portal.
package func buildPublicRouter(_ dependencies: some EndpointDependencies) -> Router<GatewayRequestContext> {
    let router = Router(context: GatewayRequestContext.self)
    // Requests for `routes` never get here: the proxy engine answers them (HTTP1ConnectionHandler, HTTP2StreamRouter).
    addObservability(to: router, listener: "public", dependencies: dependencies)
    health(dependencies).addRoutes(to: router)
    JWKSController<GatewayRequestContext>(jwks: dependencies.assertions.jwks).addRoutes(to: router)
    PartnerAPIController(authenticator: dependencies.apiKeys, clientAddress: dependencies.clientAddress).addRoutes(to: router)
    SDKTokenController(
        apiKeys: dependencies.apiKeys, sessions: dependencies.sessions, issuer: dependencies.tokenIssuer,
        clientAddress: dependencies.clientAddress, policies: dependencies.policies,
        rateLimits: dependencies.rateLimitGate, logger: dependencies.logger
    ).addRoutes(to: router)
    AuthController(
        otps: dependencies.otps, sessions: dependencies.sessions, issuer: dependencies.tokenIssuer,
        bearer: dependencies.bearer, delivery: dependencies.otpDelivery, hasher: dependencies.phoneHasher,
        clientAddress: dependencies.clientAddress, policies: dependencies.policies,
        rateLimits: dependencies.rateLimitGate, cors: CORSPolicy(dependencies.config.web), logger: dependencies.logger
    ).addRoutes(to: router)
    if dependencies.config.portal.enabled, let site = dependencies.portalSite { addPortal(to: router, site: site, dependencies: dependencies) }
    return router
}

/// The portal at `/portal/`: its pages, and its API under `/portal/v1` behind
/// ``PortalAuthMiddleware``, made of the admin API's own operations.
private func addPortal(to router: Router<GatewayRequestContext>, site: PortalSite, dependencies: some EndpointDependencies) {
    PortalSiteController(site: site).addRoutes(to: router)
    let audit = AdminAudit(log: dependencies.auditLog, logger: dependencies.logger)
    let api = router.group("/portal/v1").add(middleware: PortalAuthMiddleware(
        origin: dependencies.config.portal.origin, sessions: dependencies.memberSessions, registry: dependencies.registry
    ))
    PortalSessionController(
        members: dependencies.members, sessions: dependencies.memberSessions, registry: dependencies.registry,
        codes: OneTimeCodes(otps: dependencies.otps, policies: dependencies.policies, rateLimits: dependencies.rateLimitGate),
        delivery: dependencies.portalDelivery, hasher: dependencies.phoneHasher, clientAddress: dependencies.clientAddress, audit: audit
    ).addRoutes(to: api)
    PortalMeController().addRoutes(to: api)
    let keys = KeysController(registry: dependencies.registry, verifier: dependencies.keyVerifier, audit: audit)
    PortalKeysController(keys: keys, registry: dependencies.registry, audit: audit).addRoutes(to: api)
    PortalUsageController(usage: UsageController(dependencies), registry: dependencies.registry).addRoutes(to: api)
    PortalAuditController(log: dependencies.auditLog).addRoutes(to: api)
    PortalMembersController(members: MembersController(members: dependencies.members, audit: audit)).addRoutes(to: api)
}

/// The admin listener's router: admin credentials and roles, then `/v1`'s resources.
package func buildAdminRouter(_ dependencies: some EndpointDependencies) -> Router<GatewayRequestContext> {
    let config = dependencies.config
    let router = Router(context: GatewayRequestContext.self)
    addObservability(to: router, listener: "admin", dependencies: dependencies)
    let audit = AdminAudit(log: dependencies.auditLog, logger: dependencies.logger)
    router.add(middleware: AdminAuthMiddleware(breakGlassToken: config.secrets.adminToken, admins: dependencies.admins, audit: audit))
    MetricsController<GatewayRequestContext>().addRoutes(to: router)
    router.get("/healthz") { _, _ in StatusBody(status: "ok") }
    let v1 = router.group("/v1")
    AdminsController(admins: dependencies.admins, audit: audit).addRoutes(to: v1)
    PartnersController(
        registry: dependencies.registry, verifier: dependencies.keyVerifier, sessions: dependencies.memberSessions, audit: audit
    ).addRoutes(to: v1)
    KeysController(registry: dependencies.registry, verifier: dependencies.keyVerifier, audit: audit).addRoutes(to: v1)
    MembersController(members: dependencies.members, audit: audit).addRoutes(to: v1)
    AuditController(log: dependencies.auditLog).addRoutes(to: v1)
    UsageController(dependencies).addRoutes(to: v1)
    health(dependencies).addStatusRoute(to: v1)
    UsersController(
        sessions: dependencies.sessions, revocations: dependencies.revocations, audit: audit,
        pseudonym: UserPseudonym(derivingFrom: config.secrets.phoneKey.bytes), redis: dependencies.redis, routeNames: config.routes.map(\.name)
    ).addRoutes(to: v1)
    return router
}

/// The authorization listener's router (`authz.listen`): the verify API for `verifier`
/// credentials, and an open `/healthz` for the edges' checks. `/forward` never gets here: the
/// forward authorizer answers it (``ForwardAuthorizer``).
package func buildAuthzRouter(_ dependencies: some EndpointDependencies, engine: ProxyEngine) -> Router<GatewayRequestContext> {
    let router = Router(context: GatewayRequestContext.self)
    addObservability(to: router, listener: AuthorizationListener.name, dependencies: dependencies)
    let audit = AdminAudit(log: dependencies.auditLog, logger: dependencies.logger)
    router.add(middleware: AdminAuthMiddleware(
        breakGlassToken: dependencies.config.secrets.adminToken, admins: dependencies.admins, audit: audit, listener: .authz
    ))
    router.get("/healthz") { _, _ in StatusBody(status: "ok") }
    VerifyController(engine: engine).addRoutes(to: router)
    return router
}

private func health(_ dependencies: some EndpointDependencies) -> HealthController<GatewayRequestContext> {
    // Connecting and the subscription's confirmation each have the Redis timeout.
    HealthController(readiness: dependencies.readiness, redis: dependencies.redis, startupWait: dependencies.config.redis.timeout.duration * 2)
}

/// What every listener runs first, outermost first: a request id on every response, its server
/// span (tracing on), metrics and the access line with the final status, then errors turned
/// into the gateway's JSON error shape.
private func addObservability(to router: Router<GatewayRequestContext>, listener: String, dependencies: some EndpointDependencies) {
    router.add(middleware: RequestIDMiddleware())
    if let tracing = dependencies.tracing {
        router.add(middleware: ServerSpanMiddleware(tracing: tracing, clientAddress: dependencies.clientAddress))
    }
    router.add(middleware: MetricsMiddleware<GatewayRequestContext>(listener: listener))
    if let accessLog = dependencies.accessLog {
        router.add(middleware: AccessLogMiddleware(listener: listener, writer: accessLog, clientAddress: dependencies.clientAddress))
    }
    if listener == "public" { router.add(middleware: AuthCORSMiddleware(policy: CORSPolicy(dependencies.config.web))) }
    router.add(middleware: ErrorMiddleware<GatewayRequestContext>())
}
