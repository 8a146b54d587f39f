import GatewayAdmission
import GatewayConfiguration
import GatewayEdge
import GatewayObservability
import GatewayPrimitives
import HTTPTypes
import Metrics
import NIOCore
import NIOHTTP1

/// Forward authorization on the authorization listener (`authz.listen`; docs/edges.md): an
/// edge (nginx `auth_request`, Envoy `ext_authz`, Traefik `forwardAuth`) asks on `/forward`
/// whether a request may pass, and the answer is what the request would get from the proxy
/// engine on its route: the same route table, and the same ``AdmissionPipeline`` (credential,
/// scope, allowlist, rate limit, quota, usage), answered on the connection's event loop as a
/// proxied request's admission is (``ForwardExchange``).
///
/// It takes the listener's `/forward` requests the way the proxy engine takes the public
/// listener's routed ones (``ProxiedRequestSource``); every other request on the listener goes
/// on to its endpoints (`POST /v1/verify`, `/healthz`).
package final class ForwardAuthorizer: Sendable {
    /// The proxy engine whose routes, client address rules and admission are asked.
    package let engine: ProxyEngine
    let requestMetrics = RequestMetricHandles(listener: AuthorizationListener.name)
    let inFlight = RequestMetricHandles.inFlight(listener: AuthorizationListener.name)

    package init(engine: ProxyEngine) {
        self.engine = engine
    }

    /// What a finished forward exchange knows, for its one record.
    struct Outcome {
        let status: Int
        let started: ContinuousClock.Instant
        /// The original request's method, or the forward request's when it named none.
        let method: String
        let route: ProxyRoute?
        let requestID: String
        let clientIP: String?
        /// Who was allowed, or nil on a refusal.
        let identity: ProxyIdentity?
        /// The refusal's code; nil when allowed.
        let refusal: String?
    }

    /// The metrics, the usage count and the access line of an answered forward request.
    func finished(_ outcome: Outcome) {
        inFlight.decrement()
        let elapsed = ContinuousClock.now - outcome.started
        let route = outcome.route?.endpointLabel ?? RouteLabel.unmatched
        let handles = requestMetrics.handles(for: .init(route: route, method: outcome.method, status: outcome.status))
        handles.counter.increment()
        handles.timer.record(duration: elapsed)
        let allowed = outcome.refusal == nil
        let reason = outcome.refusal ?? (outcome.route?.auth == GatewayConfig.Route.Auth.none ? "none" : "ok")
        AuthorizationMetrics.decided(.init(kind: "forward", route: route, decision: allowed ? "allowed" : "refused", reason: reason))
        if allowed, let keyID = outcome.identity?.keyID, let usage = engine.apiKeys.usage {
            // The edge, not the gateway, sends it on: its upstream's answer is unknown here.
            ProxyUsage.countFinished(keyID: keyID, status: outcome.status, reachedUpstream: false, usage: usage)
        }
        guard let accessLog = engine.accessLog else { return }
        var record = AccessLogRecord(
            listener: AuthorizationListener.name, requestID: outcome.requestID, method: outcome.method, route: route,
            status: outcome.status, duration: elapsed, client: outcome.clientIP, userID: outcome.identity?.userID,
            partnerID: outcome.identity?.partnerID, auth: reason, bytesIn: 0, bytesOut: 0
        )
        record.keyID = outcome.identity?.keyID
        record.decision = allowed ? "allowed" : "refused"
        accessLog.record(record)
    }

    /// The head of an allowed answer: the request id, the caller's identity fields and the
    /// route's `RateLimit-*` fields, which the edge copies onto the request it sends on, and
    /// for Envoy (`x-envoy-auth-headers-to-remove`, ignored by the other edges) the fields the
    /// upstream must not get from the client: every identity field this caller has none of,
    /// and the credentials the route does not forward.
    static func allowedFields(_ admitted: Admitted, route: ProxyRoute, requestID: String) -> HTTPHeaders {
        var fields = HTTPHeaders()
        fields.reserveCapacity(10)
        fields.add(name: HeaderName.requestID.name, value: requestID)
        var removed = ""
        func remove(_ name: String) { removed += removed.isEmpty ? name : ", " + name }
        var present: [String] = []
        admitted.identity.forEachField { field, value in
            fields.add(name: field.name, value: value)
            present.append(field.lowercase)
        }
        for field in ProxyIdentity.fields where !present.contains(field.lowercase) { remove(field.lowercase) }
        if !route.forwardAuthorization { remove(HeaderName.authorization.lowercase) }
        if !route.forwardAPIKey { remove(HeaderName.apiKey.lowercase) }
        for field in admitted.limitHeaders { fields.add(name: field.name.rawName, value: field.value) }
        if !removed.isEmpty { fields.add(name: envoyHeadersToRemove, value: removed) }
        fields.add(name: "Content-Length", value: "0")
        return fields
    }

    /// Envoy's `ext_authz` HTTP service reads the fields to drop from the request it passes on here.
    static let envoyHeadersToRemove = "x-envoy-auth-headers-to-remove"
}

extension ForwardAuthorizer: ProxiedRequestSource {
    package func makeExchange(
        for head: ClientRequestHead,
        answeringThrough client: any ProxyDownstream,
        memo: inout ProxyEngine.ConnectionMemo,
        on eventLoop: any EventLoop
    ) -> (any ProxiedRequestExchange)? {
        guard takes(head.path) else { return nil }
        // Its rules read NIO's head, made here: an authorization request is no proxied one.
        return ForwardExchange(head: head.requestHead, authorizer: self, client: client, peerIP: memo.peerIP, eventLoop: eventLoop)
    }

    package func takes(_ head: ClientRequestHead, memo: inout ProxyEngine.ConnectionMemo) -> Bool {
        takes(head.path)
    }
}

extension ForwardAuthorizer: ProxiedPaths {
    package func takes(_ path: Substring) -> Bool {
        ProxyRoute.isUnder(path, prefix: ForwardedRequest.prefix)
    }

    package var anchoredPrefix: String? { ForwardedRequest.prefix }
}

/// The authorization listener's name in metrics and access lines.
package enum AuthorizationListener {
    package static let name = "authz"
}
