import Foundation
import GatewayConfiguration
import GatewayEdge
import GatewayObservability
import GatewayPrimitives
import HTTPTypes
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import RateLimit
import Tracing

/// The rules of proxying, in one place, for ``HTTP1ConnectionHandler``, ``HTTP2StreamRouter`` and ``ProxyExchange``: which
/// requests are proxied, who the caller is and whether they are admitted, what the upstream
/// is sent, and the record of a finished exchange. One value, shared by every connection.
///
/// Admission is answered from memory whenever it can be (`auth: none`, a bearer token or an
/// API key already verified and cached, a cached assertion, no route rate limit); otherwise
/// it is one asynchronous step, a future completed on the connection's event loop, that does
/// what is missing: the token or key lookup, the revocation load, the route's token bucket
/// (one Redis round trip for all its buckets), the assertion.
///
/// A class, not a struct: every exchange keeps the engine, and copying a struct of a dozen
/// references in and out would retain and release each one.
package final class ProxyEngine: Sendable {
    package let routes: RouteTable
    package let clientAddress: ClientAddress
    package let apiKeys: APIKeyAuthenticator
    package let bearer: BearerAuthenticator
    /// Signs the `X-Gateway-Assertion` of authenticated routes.
    package let assertions: AssertionSigner
    package let policies: RateLimitPolicies
    package let rateLimits: RateLimitGate
    package let maxBodyBytes: Int
    /// Where keyed requests' locks and stored responses live (``IdempotentRequest``).
    package let idempotency: IdempotencyStore?
    /// CORS for `web.allowed_origins` on routes that leave it to the gateway.
    package let cors: CORSPolicy
    /// Where the access line of every finished exchange goes (it knows whether
    /// `log.access_log` is on).
    package let accessLog: AccessLogWriter?
    /// The spans of every exchange (``ExchangeTrace``); nil when tracing is off.
    package let tracing: RequestTracing?
    package let logger: Logger
    package let requestMetrics = RequestMetricHandles(listener: "public")
    /// `gateway_http_requests_in_flight{listener="public"}` for proxied requests.
    package let inFlight = RequestMetricHandles.inFlight(listener: "public")
    /// The open upgraded (WebSocket) connections, closed when their credential ends.
    package let upgraded: UpgradedConnections

    package init(
        routes: RouteTable, clientAddress: ClientAddress, apiKeys: APIKeyAuthenticator, bearer: BearerAuthenticator,
        assertions: AssertionSigner, policies: RateLimitPolicies, rateLimits: RateLimitGate, maxBodyBytes: Int,
        accessLog: AccessLogWriter?, tracing: RequestTracing?, logger: Logger, idempotency: IdempotencyStore? = nil, cors: CORSPolicy = CORSPolicy(GatewayConfig.Web()), upgraded: UpgradedConnections? = nil
    ) {
        self.cors = cors
        self.upgraded = upgraded ?? UpgradedConnections(bearer: bearer, keys: apiKeys.verifier, logger: logger)
        self.routes = routes
        self.clientAddress = clientAddress
        self.apiKeys = apiKeys
        self.bearer = bearer
        self.assertions = assertions
        self.policies = policies
        self.rateLimits = rateLimits
        self.maxBodyBytes = maxBodyBytes
        self.idempotency = idempotency
        self.accessLog = accessLog
        self.tracing = tracing
        self.logger = logger
    }

    /// What the engine keeps per client connection, so that it is worked out once.
    package struct ConnectionMemo {
        /// The peer's address as text, formatted once per connection by ``notePeer(of:)``.
        package private(set) var peerIP: String?
        private var peerNoted = false
        /// A keep-alive connection carries one driver's token, or one partner's key, on
        /// every request.
        package var lastToken: BearerAuthenticator.LastToken?
        package var lastKey: APIKeyAuthenticator.LastKey?
        /// The route rate-limit check of the connection's last user or partner, built once.
        package var lastLimit: LastLimit?
        /// The quota check of the connection's last key, with the route's limit folded in.
        package var lastQuota: QuotaBuckets?
        package var lastAssertion: AssertionSigner.Issued?
        /// The last caller, and the last caller with an assertion: reused while requests name
        /// the same ones, instead of being made (and their strings retained) per request.
        package var lastIdentity: ProxyIdentity?
        package var lastAsserted: ProxyIdentity?
        /// The routes as this connection holds them (``RouteTable/match(_:holding:)``).
        package var routes = RouteTable.Held()

        package init() {}

        /// Takes the connection's peer at its first request (the address is known by then;
        /// a handler is often added before it is), and only then.
        package mutating func notePeer(of channel: any Channel) {
            guard !peerNoted else { return }
            peerIP = channel.remoteAddress?.ipAddress
            peerNoted = true
        }
    }

    /// A route's rate-limit check for one caller, and what it was built from.
    package struct LastLimit {
        package let route: String
        package let limit: GatewayConfig.Route.RateLimit
        package let caller: String
        package let check: RateLimitCheck

        /// The check, when it is this caller's on this route: compared where it is stored
        /// (copying the memo's entry out to compare it would retain and release each field).
        package func check(caller: String, route: String, limit: GatewayConfig.Route.RateLimit) -> RateLimitCheck? {
            self.caller == caller && self.route == route && self.limit == limit ? check : nil
        }
    }

    /// A request for a route, as the engine sees it once its head is in.
    ///
    /// A class, not a struct: the exchange, its admission step and its record all keep it,
    /// and each copy of a struct of eight references would retain and release all eight.
    package final class Request: Sendable {
        package let route: ProxyRoute
        package let head: HTTPRequestHead
        package let path: Substring
        package let query: Substring?
        package let requestID: String
        package let peerIP: String?
        /// The client as ``ClientAddress`` resolves it (the peer, or past trusted proxies):
        /// what per-address limits key on and the access log shows, worked out once.
        package let clientIP: String?
        package let body: Body
        /// Whether it asks to switch protocols, and may.
        package let handshake: WebSocketHandshake

        package init(
            route: ProxyRoute, head: HTTPRequestHead, path: Substring, query: Substring?, requestID: String,
            peerIP: String?, clientIP: String?, body: Body, handshake: WebSocketHandshake = .none
        ) {
            self.route = route
            self.head = head
            self.path = path
            self.query = query
            self.requestID = requestID
            self.peerIP = peerIP
            self.clientIP = clientIP
            self.body = body
            self.handshake = handshake
        }

        package typealias Body = DeclaredBody

        package var hasBody: Bool { body != .none }
        package var method: String { head.method.rawValue }
    }

    /// Who was admitted, and the `RateLimit-*` fields their response carries.
    package struct Admitted: Sendable {
        package let identity: ProxyIdentity
        package let limitHeaders: HTTPFields
    }

    package enum Admission {
        case admitted(Admitted)
        /// Completed on the connection's loop; fails with the ``GatewayError`` to answer.
        case pending(EventLoopFuture<Admitted>)
    }

    /// The request when a route takes it, or nil when the gateway's own endpoints
    /// (Hummingbird) answer it. Only origin-form targets (`/path?query`) are proxied.
    package func request(for head: HTTPRequestHead, memo: inout ConnectionMemo) -> Request? {
        let target = head.uri
        guard target.utf8.first == UInt8(ascii: "/") else { return nil }
        let path: Substring
        let query: Substring?
        if let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
            path = target[..<mark]
            query = target[target.index(after: mark)...]
        } else {
            path = Substring(target)
            query = nil
        }
        guard let route = routes.match(path, holding: &memo.routes) else { return nil }
        var head = head
        let handshake = WebSocketHandshake.of(&head, websocketRoute: route.websocket, bearerRoute: route.auth == .bearer)
        let peerIP = memo.peerIP
        let fields = head.headers
        let body = Request.Body(fields)
        let requestID = fields.first(name: HeaderName.requestID.name).flatMap { RequestID.isSane($0) ? $0 : nil } ?? RequestID.generate()
        return Request(
            route: route, head: head, path: path, query: query, requestID: requestID, peerIP: peerIP,
            clientIP: clientAddress.resolve(peerIP: peerIP, forwardedFor: fields[HeaderName.forwardedFor.name]), body: body,
            handshake: handshake
        )
    }

    /// Admits `request`: the caller, the route's rate limit, then (once the limit passed) the
    /// signed assertion. Each step is answered from memory or needs one lookup; when every
    /// answer is in memory the request is admitted at once, else the steps that need a lookup
    /// run as futures on `eventLoop`. A caller memory knows costs one Redis round trip for a
    /// limited route and no Swift task; only a caller it does not know yet (a first token, an
    /// uncached key) and a signature none is cached for take one.
    package func admit(_ request: Request, memo: inout ConnectionMemo, on eventLoop: any EventLoop) -> Admission {
        if let identity = cachedIdentity(request, memo: &memo) {
            if request.route.auth == .bearer { CacheMetrics.token.hit() }
            return limitThenAssert(identity, request: request, memo: &memo, on: eventLoop)
        }
        // The steps after the lookup run in its callback: they keep the request's trace, so
        // the rate limit's Redis call is still a span of the request's.
        let context = ServiceContext.current
        return .pending(lookUpIdentity(request, on: eventLoop).flatMap { identity in
            ServiceContext.$current.withValue(context) {
                var memo = ConnectionMemo()
                switch self.limitThenAssert(identity, request: request, memo: &memo, on: eventLoop) {
                case .admitted(let admitted): return eventLoop.makeSucceededFuture(admitted)
                case .pending(let admitted): return admitted
                }
            }
        })
    }

    /// The steps after the caller is known: the route's limit, then the assertion. Its cache
    /// is looked at before the limit is checked, but a signature, when none is cached, is made
    /// only after the limit passed: a refused request never costs one.
    private func limitThenAssert(_ identity: ProxyIdentity, request: Request, memo: inout ConnectionMemo, on eventLoop: any EventLoop) -> Admission {
        let asserted = cachedAssertion(for: identity, request: request, memo: &memo)
        guard let check = routeLimit(request, identity: identity, memo: &memo) else {
            guard let asserted else { return .pending(signed(identity, limitHeaders: [:], request: request, on: eventLoop)) }
            return .admitted(Admitted(identity: asserted, limitHeaders: [:]))
        }
        let onStoreError = RateLimitGate.OnStoreError.storePolicy(policies.limits.onStoreError)
        let policy: RateLimitGate.Policy = request.route.rateLimit == nil ? .quota : .route
        let refused = ProxyUsage.counter(for: identity, usage: apiKeys.usage)
        guard let asserted else {
            let limited = rateLimits.admit(check, policy: policy, onStoreError: onStoreError, on: eventLoop, refused: refused) { $0 }
            return .pending(limited.flatMap { limitHeaders in self.signed(identity, limitHeaders: limitHeaders, request: request, on: eventLoop) })
        }
        return .pending(rateLimits.admit(check, policy: policy, onStoreError: onStoreError, on: eventLoop, refused: refused) { limitHeaders in
            Admitted(identity: asserted, limitHeaders: limitHeaders)
        })
    }

    /// `identity` with its cached assertion, or itself on routes without one; nil when one
    /// must be signed.
    private func cachedAssertion(for identity: ProxyIdentity, request: Request, memo: inout ConnectionMemo) -> ProxyIdentity? {
        guard let channel = identity.channel, let subject = identity.subject else { return identity }
        guard let assertion = assertions.cachedAssertion(
            subject: subject, channel: channel, partnerID: identity.partnerID, audience: request.route.name, last: &memo.lastAssertion
        ) else { return nil }
        CacheMetrics.assertion.hit()
        if let last = memo.lastAsserted, last.assertion == assertion, last.isSameCaller(as: identity) { return last }
        let asserted = identity.with(assertion: assertion)
        memo.lastAsserted = asserted
        return asserted
    }

    /// `identity` admitted once its assertion is signed (a Swift task: jwt-kit signs
    /// asynchronously, about once a minute per caller and route).
    private func signed(_ identity: ProxyIdentity, limitHeaders: HTTPFields, request: Request, on eventLoop: any EventLoop) -> EventLoopFuture<Admitted> {
        eventLoop.makeFutureWithTask {
            do {
                return Admitted(identity: try await self.signing(identity, route: request.route), limitHeaders: limitHeaders)
            } catch {
                throw self.refusal(for: error, request: request)
            }
        }
    }

    /// `identity` with its assertion for `route`, or itself on routes without one.
    private func signing(_ identity: ProxyIdentity, route: ProxyRoute) async throws -> ProxyIdentity {
        guard let channel = identity.channel, let subject = identity.subject else { return identity }
        return identity.with(assertion: try await assertions.assertion(
            subject: subject, channel: channel, partnerID: identity.partnerID, audience: route.name
        ))
    }

    /// The route's rate-limit check for this caller, or nil without one. A per-user or
    /// per-partner check is built once per connection (its bucket key and Redis command are
    /// the same on every request of that caller); a per-address one each time, since the
    /// client behind a trusted proxy can change from request to request.
    private func routeLimit(_ request: Request, identity: ProxyIdentity, memo: inout ConnectionMemo) -> RateLimitCheck? {
        let route = request.route
        if identity.keyQuota != nil || identity.partnerQuota != nil {
            return quotaLimit(request, identity: identity, memo: &memo)
        }
        guard let limit = route.rateLimit else { return nil }
        let caller: String?
        switch limit.per {
        case .user: caller = identity.userID
        case .partner: caller = identity.partnerID
        case .ip: caller = nil
        }
        if let caller, let check = memo.lastLimit?.check(caller: caller, route: route.name, limit: limit) {
            return check
        }
        guard let bucket = policies.route(route, userID: identity.userID, partnerID: identity.partnerID, clientIP: request.clientIP) else {
            return nil
        }
        let check = rateLimits.limiter.prepare([bucket])
        if let caller { memo.lastLimit = LastLimit(route: route.name, limit: limit, caller: caller, check: check) }
        return check
    }

    /// The check of the caller's quotas with the route's limit folded in (one script, one
    /// round trip), kept per connection for the rest of the period; made each time when the
    /// route limits per address (the client behind a trusted proxy can change).
    private func quotaLimit(_ request: Request, identity: ProxyIdentity, memo: inout ConnectionMemo) -> RateLimitCheck? {
        let route = request.route
        let now = Date()
        let perAddress = route.rateLimit?.per == .ip
        if !perAddress, let check = memo.lastQuota?.check(for: identity, route: route.name, limit: route.rateLimit, now: now) { return check }
        let bucket = policies.route(route, userID: identity.userID, partnerID: identity.partnerID, clientIP: request.clientIP)
        let made = QuotaBuckets.made(
            for: identity, route: route.name, limit: route.rateLimit, routeBucket: bucket,
            calendar: apiKeys.quotaCalendar, limiter: rateLimits.limiter, now: now
        )
        if !perAddress { memo.lastQuota = made }
        return made?.check
    }

    /// The caller as memory already knows them; nil when that takes more (a lookup, a
    /// refusal with its metrics).
    private func cachedIdentity(_ request: Request, memo: inout ConnectionMemo) -> ProxyIdentity? {
        let fields = request.head.headers
        switch request.route.auth {
        case .none:
            return .anonymous
        case .bearer:
            guard let claims = bearer.cachedClaims(authorization: fields.first(name: HeaderName.authorization.name), last: &memo.lastToken) else {
                return nil
            }
            if let last = memo.lastIdentity, last.isCaller(of: claims) { return last }
            let identity = ProxyIdentity(claims: claims)
            memo.lastIdentity = identity
            return identity
        case .apiKey:
            guard let partner = apiKeys.cachedIdentity(
                presented: fields.first(name: HeaderName.apiKey.name), clientIP: request.clientIP, scope: request.route.scope, last: &memo.lastKey
            ) else { return nil }
            if let last = memo.lastIdentity, last.isCaller(of: partner) { return last }
            let identity = ProxyIdentity(partner: partner)
            memo.lastIdentity = identity
            return identity
        }
    }

    /// The caller, looked up (a token's signature and revocation, a key in Redis) in a Swift
    /// task, as the authenticators are asynchronous; a refusal fails the future with its
    /// ``GatewayError``.
    private func lookUpIdentity(_ request: Request, on eventLoop: any EventLoop) -> EventLoopFuture<ProxyIdentity> {
        eventLoop.makeFutureWithTask {
            let fields = request.head.headers
            do {
                switch request.route.auth {
                case .none:
                    return .anonymous
                case .bearer:
                    return ProxyIdentity(claims: try await self.bearer.authenticate(authorization: fields.first(name: HeaderName.authorization.name)))
                case .apiKey:
                    return ProxyIdentity(partner: try await self.apiKeys.authenticate(
                        presented: fields.first(name: HeaderName.apiKey.name), clientIP: request.clientIP, scope: request.route.scope
                    ))
                }
            } catch {
                throw self.refusal(for: error, request: request)
            }
        }
    }

    /// What the client is answered for an admission that failed: the ``GatewayError`` itself,
    /// anything else logged and answered 500.
    private func refusal(for error: any Error, request: Request) -> GatewayError {
        if let refusal = error as? GatewayError { return refusal }
        logger.error("admitting a proxied request failed", metadata: ["route": .string(request.route.name), "error": "\(type(of: error))", "request_id": .string(request.requestID)])
        return GatewayError.internalError
    }

    /// The CORS fields of `request`'s response, or nil where the gateway leaves CORS alone.
    package func corsFields(for request: Request) -> [(name: String, value: String)]? {
        guard cors.isEnabled, request.route.cors else { return nil }
        return cors.responseFields(origin: request.head.headers.first(name: "origin"))
    }

    /// The fields of the `204` the gateway answers a CORS preflight with, or nil when
    /// `request` is not one it answers (it then goes through admission as any other).
    package func preflightFields(for request: Request) -> [(name: String, value: String)]? {
        guard cors.isEnabled, request.route.cors, CORSPolicy.isPreflight(method: request.head.method, headers: request.head.headers) else {
            return nil
        }
        return cors.preflightFields(origin: request.head.headers.first(name: "origin"))
    }

    /// What the upstream is sent: the route's target, the header rules of ``ForwardedHeaders``,
    /// the caller's identity and `trace` (the trace context, when the gateway sets one), framed
    /// by ``UpstreamRequestFraming``, as bytes.
    /// `target`: the fleet's target it goes to (its `Host`); nil: the route's first.
    package func upstreamHead(
        for request: Request, identity: ProxyIdentity, trace: [(name: String, value: String)]?, allocator: ByteBufferAllocator,
        target: UpstreamTarget? = nil
    ) -> UpstreamRequestHead {
        let client = clientAddress.forwarding(peerIP: request.peerIP, earlierHops: request.head.headers[HeaderName.forwardedFor.name])
        return Self.upstreamHead(for: request, identity: identity, client: client, trace: trace, allocator: allocator, target: target)
    }

    /// ``upstreamHead(for:identity:trace:allocator:)`` once the client's forwarding chain is known.
    package static func upstreamHead(
        for request: Request, identity: ProxyIdentity, client: ClientAddress.Forwarding, trace: [(name: String, value: String)]?,
        allocator: ByteBufferAllocator, target: UpstreamTarget? = nil
    ) -> UpstreamRequestHead {
        let fields = request.head.headers
        var head = UpstreamRequestHead(
            method: request.head.method,
            target: request.route.upstreamTarget(path: request.path, query: request.query, target: request.head.uri),
            allocator: allocator
        )
        ForwardedHeaders.request(
            from: fields, route: request.route, identity: identity, requestID: request.requestID, client: client,
            host: fields.first(name: "host"), trace: trace, upstreamAuthority: target?.authority, into: &head
        )
        if request.handshake == .websocket {
            // Hop-by-hop, so dropped above: the gateway asks the upstream for the upgrade itself.
            head.add(name: "Connection", value: "Upgrade")
            head.add(name: "Upgrade", value: "websocket")
        }
        head.end(framing: UpstreamRequestFraming.of(request.body, method: request.head.method))
        return head
    }

    /// An exchange began (`gateway_http_requests_in_flight`); it ends with ``finished(_:)``
    /// or ``abandoned()``.
    package func started() {
        inFlight.increment()
    }

    /// The client went away before a response: no status to record, nothing to log.
    package func abandoned() {
        inFlight.decrement()
    }

    /// What a finished exchange knows about itself, for its one record (with its request,
    /// passed alongside rather than copied in).
    package struct Outcome {
        package let status: Int
        package let started: ContinuousClock.Instant
        /// Who was admitted, or nil when the request was refused before that.
        package let identity: ProxyIdentity?
        /// The refusal's code when admission failed (the access log's `auth`).
        package let refusal: String?
        package let upstreamDuration: Duration?
        package let bytesIn: Int
        package let bytesOut: Int
        /// The request's trace, when tracing is on (the access log's `trace_id`).
        package let traceID: String?
        /// Targets tried (0: the request never reached the upstream phase), and the one that
        /// answered (the access log's `tries` and `upstream`).
        package var tries = 0
        package var target: String?
    }

    /// The one record of a finished exchange, once its response has ended: the request
    /// metrics and the access line the gateway's own endpoints get from their middlewares,
    /// with the same labels and the same ``AccessLogRecord``.
    package func finished(_ request: Request, _ outcome: Outcome) {
        inFlight.decrement()
        let elapsed = ContinuousClock.now - outcome.started
        let labels = RequestMetricHandles.Labels(route: request.route.endpointLabel, method: request.method, status: outcome.status)
        let handles = requestMetrics.handles(for: labels)
        handles.counter.increment()
        handles.timer.record(duration: elapsed)
        if let keyID = outcome.identity?.keyID, let usage = apiKeys.usage {
            ProxyUsage.countFinished(keyID: keyID, status: outcome.status, reachedUpstream: outcome.tries > 0, usage: usage)
        }
        guard let accessLog else { return }
        var record = AccessLogRecord(
            listener: "public",
            requestID: request.requestID,
            method: request.method,
            route: labels.route,
            status: outcome.status,
            duration: elapsed,
            client: request.clientIP,
            userID: outcome.identity?.userID,
            partnerID: outcome.identity?.partnerID,
            auth: outcome.refusal ?? (request.route.auth == .none ? "none" : "ok"),
            upstreamDuration: outcome.upstreamDuration,
            bytesIn: outcome.bytesIn,
            bytesOut: outcome.bytesOut,
            traceID: outcome.traceID,
            tries: outcome.tries,
            upstream: outcome.target
        )
        record.keyID = outcome.identity?.keyID
        accessLog.record(record)
    }
}
