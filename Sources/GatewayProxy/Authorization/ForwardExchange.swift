import GatewayAdmission
import GatewayEdge
import GatewayPrimitives
import HTTPTypes
import Metrics
import NIOCore
import NIOHTTP1

/// One forward request (``ForwardAuthorizer``), answered on its connection's event loop: the
/// request it asks about (``ForwardedRequest``), that request's route, then the route's
/// admission exactly as the proxy engine asks it, and the answer:
///
/// - allowed: `200`, no body, with the fields of ``ForwardAuthorizer/allowedFields(_:route:requestID:)``;
/// - refused: the status, fields and error body a proxied request gets, plus the body again in
///   `X-Gateway-Error`, which nginx's `auth_request` cannot read from a body (docs/edges.md);
/// - no route takes the path: `404 NOT_FOUND`; no request named: `400 INVALID_REQUEST`.
///
/// The forward request's body, if an edge sends one, is read and dropped.
final class ForwardExchange: ProxiedRequestExchange {
    private let head: HTTPRequestHead
    private let authorizer: ForwardAuthorizer
    private let client: any ProxyDownstream
    private let eventLoop: any EventLoop
    private let started = ContinuousClock.now
    private let requestID: String
    /// The client as the edge tells it (`X-Forwarded-For`, believed from `trusted_proxies`).
    private let clientIP: String?
    private var method: String
    private var route: ProxyRoute?
    private var clientGone = false

    init(head: HTTPRequestHead, authorizer: ForwardAuthorizer, client: any ProxyDownstream, peerIP: String?, eventLoop: any EventLoop) {
        self.head = head
        self.authorizer = authorizer
        self.client = client
        self.eventLoop = eventLoop
        let fields = head.headers
        requestID = fields.first(name: HeaderName.requestID.name).flatMap { RequestID.isSane($0) ? $0 : nil } ?? RequestID.generate()
        clientIP = authorizer.engine.clientAddress.resolve(peerIP: peerIP, forwardedFor: fields[HeaderName.forwardedFor.name])
        method = head.method.rawValue
        authorizer.inFlight.increment()
    }

    func start(memo: inout ProxyEngine.ConnectionMemo) {
        let forwarded: ForwardedRequest
        switch ForwardedRequest.of(head) {
        case .success(let request): forwarded = request
        case .failure(let refusal): return refuse(refusal)
        }
        method = forwarded.method.rawValue
        let engine = authorizer.engine
        guard let route = engine.routes.match(forwarded.path, holding: &memo.routes) else { return refuse(.notFound) }
        self.route = route
        let admission = engine.admission.admit(
            route.admission, credentials: PresentedCredentials(head.headers), clientIP: clientIP, requestID: requestID, memo: &memo.admission, on: eventLoop
        )
        switch admission {
        case .admitted(let admitted):
            allow(admitted, route: route)
        case .pending(let future):
            future.assumeIsolated().whenComplete { result in
                switch result {
                case .success(let admitted): self.allow(admitted, route: route)
                case .failure(let error): self.refuse(error as? GatewayError ?? .internalError)
                }
            }
        }
    }

    private func allow(_ admitted: Admitted, route: ProxyRoute) {
        guard !clientGone else { return abandon() }
        let fields = ForwardAuthorizer.allowedFields(admitted, route: route, requestID: requestID)
        client.writeResponseHead(ProxyResponseHead(status: .ok, fields: .gateway(fields)))
        client.endResponse(trailers: nil, closingAfter: false)
        finish(status: 200, identity: admitted.identity, refusal: nil)
    }

    private func refuse(_ error: GatewayError) {
        guard !clientGone else { return abandon() }
        var (head, body) = error.channelParts(requestID: requestID)
        head.headers.add(name: Self.errorField, value: String(buffer: body))
        client.writeResponseHead(ProxyResponseHead(status: head.status, fields: .gateway(head.headers)))
        client.writeResponseBody(body)
        client.endResponse(trailers: nil, closingAfter: false)
        finish(status: Int(error.status.code), identity: nil, refusal: error.code)
    }

    /// The error body of a refusal, repeated as a field for edges that see only fields.
    static let errorField = "X-Gateway-Error"

    private func finish(status: Int, identity: ProxyIdentity?, refusal: String?) {
        authorizer.finished(ForwardAuthorizer.Outcome(
            status: status, started: started, method: method, route: route, requestID: requestID, clientIP: clientIP,
            identity: identity, refusal: refusal
        ))
        client.exchangeAnswered()
    }

    /// The edge went away before its answer: nothing to write or record.
    private func abandon() {
        authorizer.inFlight.decrement()
    }

    // MARK: The client's side

    func requestPart(_ part: HTTPServerRequestPart) {}

    func clientFailed(_ error: any Error) {}

    func clientReadComplete() {}

    func clientWritabilityChanged() {}

    func clientClosed() {
        clientGone = true
    }

    /// A decision is answered at once and never streams: nothing to end early.
    func drain() {}
}
