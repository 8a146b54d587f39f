import Foundation
import GatewayAdmission
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

/// The rules of proxying, in one place, for ``HTTP1ConnectionHandler``, ``HTTP2StreamRouter`` and ``ProxyExchange``: which
/// requests are proxied, who the caller is and whether they are admitted, what the upstream
/// is sent, and the record of a finished exchange. One value, shared by every connection.
///
/// Admission itself is ``AdmissionPipeline``'s (the admission library), asked for every
/// request a route takes.
///
/// A class, not a struct: every exchange keeps the engine, and copying a struct of a dozen
/// references in and out would retain and release each one.
package final class ProxyEngine: Sendable {
    package let routes: RouteTable
    package let clientAddress: ClientAddress
    /// The caller, the route's limit, the assertion.
    package let admission: AdmissionPipeline
    package var apiKeys: APIKeyAuthenticator { admission.apiKeys }
    package var bearer: BearerAuthenticator { admission.bearer }
    /// Signs the `X-Gateway-Assertion` of authenticated routes.
    package var assertions: AssertionSigner { admission.assertions }
    package var policies: RateLimitPolicies { admission.policies }
    package var rateLimits: RateLimitGate { admission.rateLimits }
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
        self.admission = AdmissionPipeline(
            apiKeys: apiKeys, bearer: bearer, assertions: assertions, policies: policies, rateLimits: rateLimits, logger: logger
        )
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
        /// The callers, limits and assertions admission keeps.
        package var admission = AdmissionMemo()
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

    /// A request for a route, as the engine sees it once its head is in.
    ///
    /// A class, not a struct: the exchange, its admission step and its record all keep it,
    /// and each copy of a struct of eight references would retain and release all eight.
    package final class Request: Sendable {
        package let route: ProxyRoute
        package let head: ClientRequestHead
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
            route: ProxyRoute, head: ClientRequestHead, path: Substring, query: Substring?, requestID: String,
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
        /// The credentials the request presents, read from its head as admission asks.
        package var credentials: PresentedCredentials { PresentedCredentials(head, for: route.auth) }
        package var method: String { head.method.rawValue }
    }

    /// The request when a route takes it, or nil when the gateway's own endpoints
    /// (Hummingbird) answer it. Only origin-form targets (`/path?query`) are proxied.
    package func request(for head: ClientRequestHead, memo: inout ConnectionMemo) -> Request? {
        let target = head.target
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
        // A route with `upstream: none` is for edges only: here its paths are nobody's (404).
        guard let route = routes.match(path, holding: &memo.routes), route.hasUpstream else { return nil }
        var head = head
        let handshake = WebSocketHandshake.of(&head, websocketRoute: route.websocket, bearerRoute: route.auth == .bearer)
        let peerIP = memo.peerIP
        let body = head.declaredBody
        let requestID = head.first(HeaderName.requestID.lowercaseBytes).flatMap { RequestID.isSane($0) ? $0 : nil } ?? RequestID.generate()
        return Request(
            route: route, head: head, path: path, query: query, requestID: requestID, peerIP: peerIP,
            clientIP: clientAddress.resolve(peerIP: peerIP, forwardedFor: head.values(HeaderName.forwardedFor.lowercaseBytes)), body: body,
            handshake: handshake
        )
    }

    /// Admits `request` (``AdmissionPipeline/admit(_:fields:clientIP:requestID:memo:on:)``).
    package func admit(_ request: Request, memo: inout ConnectionMemo, on eventLoop: any EventLoop) -> Admission {
        admission.admit(
            request.route.admission, credentials: request.credentials, clientIP: request.clientIP, requestID: request.requestID,
            memo: &memo.admission, on: eventLoop
        )
    }

    /// The CORS fields of `request`'s response, or nil where the gateway leaves CORS alone.
    package func corsFields(for request: Request) -> [(name: String, value: String)]? {
        guard cors.isEnabled, request.route.cors else { return nil }
        return cors.responseFields(origin: request.head.first("origin"))
    }

    /// The fields of the `204` the gateway answers a CORS preflight with, or nil when
    /// `request` is not one it answers (it then goes through admission as any other).
    package func preflightFields(for request: Request) -> [(name: String, value: String)]? {
        guard cors.isEnabled, request.route.cors, CORSPolicy.isPreflight(method: request.head.method, has: { request.head.first($0) != nil }) else {
            return nil
        }
        return cors.preflightFields(origin: request.head.first("origin"))
    }

    /// What the upstream is sent: the route's target, the header rules of ``ForwardedHeaders``,
    /// the caller's identity and `trace` (the trace context, when the gateway sets one), framed
    /// by ``UpstreamRequestFraming``, as bytes.
    /// `target`: the fleet's target it goes to (its `Host`); nil: the route's first.
    package func upstreamHead(
        for request: Request, identity: ProxyIdentity, trace: [(name: String, value: String)]?, allocator: ByteBufferAllocator,
        target: UpstreamTarget? = nil
    ) -> UpstreamRequestHead {
        let client = clientAddress.forwarding(peerIP: request.peerIP, earlierHops: request.head.values(HeaderName.forwardedFor.lowercaseBytes))
        return Self.upstreamHead(for: request, identity: identity, client: client, trace: trace, allocator: allocator, target: target)
    }

    /// ``upstreamHead(for:identity:trace:allocator:)`` once the client's forwarding chain is known.
    package static func upstreamHead(
        for request: Request, identity: ProxyIdentity, client: ClientAddress.Forwarding, trace: [(name: String, value: String)]?,
        allocator: ByteBufferAllocator, target: UpstreamTarget? = nil
    ) -> UpstreamRequestHead {
        var head = UpstreamRequestHead(
            method: request.head.method,
            target: request.route.upstreamTarget(path: request.path, query: request.query, target: request.head.target),
            allocator: allocator
        )
        ForwardedHeaders.request(
            from: request.head, route: request.route, identity: identity, requestID: request.requestID, client: client,
            trace: trace, upstreamAuthority: target?.authority, into: &head
        )
        if request.handshake == .websocket {
            // Hop-by-hop, so dropped above: the gateway asks the upstream for the upgrade itself.
            head.add(name: "Connection", value: "Upgrade")
            head.add(name: "Upgrade", value: "websocket")
        }
        head.end(framing: UpstreamRequestFraming.of(request.body, method: request.head.method))
        return head
    }

    /// An exchange began (`gateway_http_requests_in_flight`); it ends with ``finished(_:_:)``,
    /// whether answered or its client went away.
    package func started() {
        inFlight.increment()
    }

    /// The status a request whose client went away before its response ended is recorded with
    /// (nginx's "client closed request").
    package static let clientClosedStatus = 499

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
        /// The client went away first: its call counts as allowed, with no upstream outcome.
        package var clientGone = false
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
            ProxyUsage.countFinished(keyID: keyID, status: outcome.status, reachedUpstream: outcome.tries > 0 && !outcome.clientGone, usage: usage)
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
