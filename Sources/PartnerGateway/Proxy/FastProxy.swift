import DriverTokens
import Foundation
import Logging
import Metrics
import NIOCore
import NIOHTTP1

/// Decides whether a request can be proxied on the event loop by ``FastProxyHandler``, and
/// builds what the upstream is sent.
///
/// Only requests whose every check is already answered in memory qualify: a route without a
/// rate limit (that needs Redis), no request body, and `auth: none` or a bearer token that is
/// already verified, unrevoked and has a cached assertion. Everything else (first sight of a
/// token, API keys, rate-limited routes, uploads, every refusal) goes through Hummingbird and
/// ``ProxyMiddleware``, which applies the very same rules and fills the caches the next
/// request of that caller is served from. The rules themselves live in one place each:
/// ``RouteTable``, ``BearerAuthenticator``, ``AssertionSigner``, ``ForwardedHeaders``.
struct FastProxy: Sendable {
    let routes: RouteTable
    let clientAddress: ClientAddress
    let bearer: BearerAuthenticator
    let assertions: AssertionSigner
    /// The access log, when `log.access_log` is on.
    let accessLog: Logger?
    let logger: Logger
    let requestMetrics = RequestMetricHandles()

    /// What the fast path keeps per client connection, so that it is worked out once.
    struct ConnectionMemo {
        /// The peer's address as text (formatting it showed in profiles).
        let peerIP: String?
        var lastToken: BearerAuthenticator.LastToken?

        init(peer: SocketAddress?) {
            peerIP = peer?.ipAddress
        }
    }

    struct Plan {
        let route: ProxyRoute
        let upstreamHead: HTTPRequestHead
        let requestID: String
        let method: String
        /// The client asked to close the connection after this response.
        let closeAfter: Bool
    }

    /// What to send upstream for `request`, or nil when it is not the fast path's to take.
    ///
    /// `connection` is what the fast path remembers of the client connection between its
    /// requests.
    func plan(_ request: HTTPRequestHead, connection: inout ConnectionMemo) -> Plan? {
        // HTTP/1.0 and absolute-form or `*` targets are rare; Hummingbird handles their
        // framing and conversion rules. HTTP/2 streams arrive as HTTP/1 parts with version 2
        // (GatewayTLSChannel) and are framed by NIOHTTP2: the fast path takes them too.
        guard request.version == .http1_1 || request.version.major == 2, request.uri.utf8.first == UInt8(ascii: "/") else { return nil }
        let target = request.uri
        let path: Substring
        let query: Substring?
        if let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
            path = target[..<mark]
            query = target[target.index(after: mark)...]
        } else {
            path = Substring(target)
            query = nil
        }
        guard let route = routes.match(path), route.rateLimit == nil else { return nil }
        let fields = request.headers
        guard !fields.contains(name: "transfer-encoding") else { return nil }
        if let length = fields.first(name: "content-length"), length != "0" { return nil }

        var identity = ProxyMiddleware.Identity()
        switch route.auth {
        case .none:
            break
        case .apiKey:
            return nil
        case .bearer:
            guard let claims = bearer.cachedClaims(authorization: fields.first(name: "authorization"), last: &connection.lastToken),
                  let assertion = assertions.cachedAssertion(
                      subject: claims.userID, channel: claims.channel.name, partnerID: claims.channel.partnerID, audience: route.name
                  )
            else { return nil }
            identity = ProxyMiddleware.Identity(
                userID: claims.userID, partnerID: claims.channel.partnerID, channel: claims.channel.name, assertion: assertion
            )
        }
        let requestID = fields.first(name: "x-request-id").flatMap { RequestIDMiddleware.isSane($0) ? $0 : nil } ?? RequestIDMiddleware.generate()
        let headers = ForwardedHeaders.request(
            from: fields,
            route: route,
            identity: identity.headers,
            requestID: requestID,
            forwardedFor: clientAddress.forwardedFor(peerIP: connection.peerIP, earlierHops: fields["x-forwarded-for"]),
            host: fields.first(name: "host")
        )
        let head = HTTPRequestHead(
            version: .http1_1,
            method: request.method,
            uri: route.upstreamTarget(path: path, query: query),
            headers: headers
        )
        return Plan(route: route, upstreamHead: head, requestID: requestID, method: request.method.rawValue, closeAfter: !request.isKeepAlive)
    }

    /// The request metrics and access-log line Hummingbird's middlewares give every other
    /// request, with the same labels.
    func finished(_ plan: Plan, status: Int, started: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - started
        let labels = RequestMetricHandles.Labels(route: plan.route.endpointLabel, method: plan.method, status: status)
        let (counter, timer) = requestMetrics.handles(for: labels, listener: "public")
        counter.increment()
        timer.record(duration: elapsed)
        accessLog?.info("request", metadata: [
            "method": .string(plan.method),
            "route": .string(labels.route),
            "status": .stringConvertible(status),
            "duration_ms": .string(String(format: "%.2f", elapsed.inSeconds * 1000)),
            "request_id": .string(plan.requestID),
        ])
    }
}
