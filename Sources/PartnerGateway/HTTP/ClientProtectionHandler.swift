import HTTPTypes
import NIOCore
import NIOHTTP1

/// Owns a connection's life right after HTTP decoding, for every request on it (those the
/// proxy engine answers and those Hummingbird answers alike), on both listeners
/// (slow or oversized clients are cut off; docs/public-api.md, "Proxied routes"):
/// - a request head must arrive whole within `headerReadTimeout` of the connection opening
///   (first request) or of its first byte (later requests on a keep-alive connection), else
///   the connection is closed. Seeing that first byte takes a raw-bytes handler in front of
///   the HTTP decoder, ``RequestStartWatcher``, which this handler installs and drives;
/// - a connection with no request under way for `idleTimeout` is closed;
/// - on graceful shutdown (`ChannelShouldQuiesceEvent`) the connection closes at once when
///   idle, else as soon as the responses under way have been written;
/// - after the response to a request with `Connection: close`, or an HTTP/1.0 request
///   without keep-alive, the connection closes (Hummingbird would keep an HTTP/1.0
///   connection open);
/// - a request whose headers exceed the decoder limits is answered `431` in the gateway's error
///   shape and the connection closed (Hummingbird itself would answer a bare `400`);
/// - a request the HTTP parser refuses before its head is complete (request smuggling with
///   `Content-Length` and `Transfer-Encoding` or differing `Content-Length`s, invalid header
///   characters, a malformed request line) is answered `400 INVALID_REQUEST` in the gateway's
///   error shape and the connection closed (Hummingbird itself would answer a bare `400` with
///   no body). A parser error inside a request whose response is under way is passed on to
///   whoever owns that response;
/// - `Expect: 100-continue` is answered `100 Continue` at once (Hummingbird does not, and
///   clients such as curl would wait a second before sending the body);
/// - every head passes ``RequestHeadRules`` (canonical path, one credential) before anything
///   after this handler sees it; a refused one is answered `400 INVALID_REQUEST` in its turn
///   (after the responses to earlier pipelined requests) and the connection closed;
/// - a request body must keep arriving (`server.body_read_timeout`, timed by
///   ``BodyReadDeadline``): when it stalls the answer is `408 REQUEST_TIMEOUT` if no
///   response has started, and the connection closes.
/// The error answers carry a generated `X-Request-Id`, like every other response.
///
/// The idle and shutdown rules are Hummingbird's `HTTPConnectionStateHandler`'s, which this
/// replaces (``GatewayHTTP1Channel``): that handler sits after the proxy engine and would count
/// only the requests Hummingbird sees.
final class ClientProtectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let watcher: RequestStartWatcher
    private let idleTimeout: TimeAmount?
    /// The public listener's routes: their bodies are limited between reads, every other
    /// body (the gateway's own endpoints) as a whole.
    private let proxiedRoutes: RouteTable?
    private var bodyDeadline: BodyReadDeadline
    /// Whether a response head (not a `1xx`) has been written for the oldest request in
    /// flight and its end not yet.
    private var responseStarted = false
    /// A head ``RequestHeadRules`` refused: answered once the responses before it are out.
    /// From then on the connection's input is discarded.
    private var refusal: GatewayError?
    private var context: ChannelHandlerContext?
    /// For each request read whose response has not ended yet, in order: whether the
    /// connection stays open after that response (not for `Connection: close`, nor for
    /// HTTP/1.0 without keep-alive).
    private var keepAliveAfter = CircularBuffer<Bool>(initialCapacity: 2)
    private var requestsInFlight: Int { keepAliveAfter.count }
    /// Due `idleTimeout` after a request head or end was last read or a response last ended.
    private var idleTimer: DeadlineTimer?
    private var closeWhenDone = false
    /// The connection is closing after a response: what still arrives is discarded.
    private var lingering = false
    private var answered = false

    init(headerReadTimeout: TimeAmount, idleTimeout: TimeAmount?, bodyReadTimeout: TimeAmount, proxiedRoutes: RouteTable?) {
        watcher = RequestStartWatcher(headerReadTimeout: headerReadTimeout)
        self.idleTimeout = idleTimeout
        self.proxiedRoutes = proxiedRoutes
        bodyDeadline = BodyReadDeadline(timeout: bodyReadTimeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        idleTimer = DeadlineTimer(eventLoop: context.eventLoop) { [weak self] in
            self?.idleTimeoutExpired()
        }
        try? context.pipeline.syncOperations.addHandler(watcher, position: .first)
        if context.channel.isActive { noteActivity() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        noteActivity()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        bodyDeadline.bodyEnded()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if lingering || refusal != nil { return }
        switch unwrapInboundIn(data) {
        case .head(let received):
            let head: HTTPRequestHead
            switch RequestHeadRules.admit(received) {
            case .success(let admitted):
                head = admitted
            case .failure(let error):
                refuse(error, context: context)
                return
            }
            keepAliveAfter.append(head.isKeepAlive)
            noteActivity()
            watcher.headArrived()
            let hasBody = declaresBody(head.headers)
            if hasBody {
                perform(bodyDeadline.headRead(hasBody: true, limit: bodyLimit(for: head.uri), now: context.eventLoop.now), context: context)
            }
            if hasBody, head.headers.contains(name: "expect"),
               head.headers["expect"].contains(where: { HeaderName.equals($0, "100-continue") }) {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
            }
            context.fireChannelRead(wrapInboundOut(.head(head)))
            return
        case .body:
            bodyDeadline.bodyRead()
        case .end:
            bodyDeadline.bodyEnded()
            noteActivity()
        }
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        perform(bodyDeadline.readRequested(now: context.eventLoop.now), context: context)
        context.read()
    }

    /// How the body of a request for `target` is timed: proxied routes between reads, the
    /// gateway's own endpoints as a whole.
    private func bodyLimit(for target: String) -> BodyReadDeadline.Limit {
        guard let proxiedRoutes else { return .wholeBody }
        let path = target.utf8.firstIndex(of: UInt8(ascii: "?")).map { target[..<$0] } ?? Substring(target)
        return proxiedRoutes.match(path) == nil ? .wholeBody : .betweenReads
    }

    private func perform(_ action: BodyReadDeadline.Action, context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .armTimer(let deadline):
            context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
                guard let self, let context = self.context else { return }
                self.perform(self.bodyDeadline.timerFired(now: context.eventLoop.now), context: context)
            }
        case .timedOut:
            // The stalled body belongs to the newest request; its answer may go out only
            // when it is also the oldest and nothing of its response has been sent.
            if requestsInFlight == 1 && !responseStarted {
                answerAndClose(context, .requestTimeout)
            } else {
                context.close(promise: nil)
            }
        }
    }

    /// Answers a head ``RequestHeadRules`` refused, in its turn: now if no response is
    /// outstanding, else right after the last one (``write(context:data:promise:)``).
    private func refuse(_ error: GatewayError, context: ChannelHandlerContext) {
        refusal = error
        watcher.headArrived()
        if requestsInFlight == 0 { answerRefusal(context) }
    }

    private func answerRefusal(_ context: ChannelHandlerContext) {
        guard let refusal, !answered else { return }
        answered = true
        writeError(refusal, context: context).whenComplete { _ in self.closeLingering(context) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            if head.status.code >= 200 { responseStarted = true }
            context.write(data, promise: promise)
            return
        case .body:
            context.write(data, promise: promise)
            return
        case .end:
            break
        }
        responseStarted = false
        watcher.responseEnded()
        let keepAlive = keepAliveAfter.popFirst() ?? true
        noteActivity()
        if refusal != nil && requestsInFlight == 0 && keepAlive {
            context.write(data, promise: promise)
            answerRefusal(context)
            return
        }
        if !keepAlive {
            context.writeAndFlush(data).assumeIsolated().whenComplete { result in
                promise?.completeWith(result)
                self.closeLingering(context)
            }
            return
        }
        if closeWhenDone && requestsInFlight == 0 {
            context.writeAndFlush(data).assumeIsolated().whenComplete { result in
                promise?.completeWith(result)
                context.close(promise: nil)
            }
            return
        }
        context.write(data, promise: promise)
    }

    /// How long a connection closing after its response still reads what the client sends.
    static let lingerTimeout = TimeAmount.seconds(5)

    /// Closes as nginx's lingering close does: the response is out, so stop sending (FIN),
    /// then read and discard what the client still sends (a body the request was answered
    /// without) until it closes its side or ``lingerTimeout`` passes. Closing outright with
    /// unread input makes the kernel answer with a reset, which can destroy the response
    /// before the client has read it.
    private func closeLingering(_ context: ChannelHandlerContext) {
        guard !lingering else { return }
        lingering = true
        context.close(mode: .output, promise: nil)
        context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerTimeout) {
            context.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if requestsInFlight == 0 {
            context.close(promise: nil)
        } else {
            closeWhenDone = true
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        if parserError == .headerOverflow {
            answerAndClose(context, GatewayError(.requestHeaderFieldsTooLarge, "HEADERS_TOO_LARGE", "the request headers are too large"))
        } else if requestsInFlight == 0 {
            answerAndClose(context, .invalidRequest("the request is malformed"))
        } else {
            context.fireErrorCaught(error)
        }
    }

    private func declaresBody(_ headers: HTTPHeaders) -> Bool {
        headers.contains(name: "transfer-encoding") || (headers.first(name: "content-length").flatMap { Int($0) } ?? 0) > 0
    }

    private func answerAndClose(_ context: ChannelHandlerContext, _ error: GatewayError) {
        guard !answered else { return }
        answered = true
        watcher.headArrived()
        writeError(error, context: context).whenComplete { _ in context.close(promise: nil) }
    }

    /// Writes `error` as a whole response announcing `Connection: close`.
    private func writeError(_ error: GatewayError, context: ChannelHandlerContext) -> EventLoopFuture<Void>.Isolated {
        var (head, body) = error.channelParts(requestID: RequestIDMiddleware.generate())
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        return context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated()
    }

    private func noteActivity() {
        guard let idleTimeout else { return }
        idleTimer?.expire(in: idleTimeout)
    }

    /// Idle for `idleTimeout`, unless a request is under way: then look again a timeout later.
    private func idleTimeoutExpired() {
        if requestsInFlight == 0 {
            context?.close(promise: nil)
        } else {
            noteActivity()
        }
    }
}
