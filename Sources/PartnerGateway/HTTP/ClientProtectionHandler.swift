import HTTPTypes
import NIOCore
import NIOHTTP1

/// Owns a connection's life right after HTTP decoding, for every request on it (those the
/// proxy engine answers and those Hummingbird answers alike), on both listeners
/// (SPEC §2.4 "slow or oversized clients are cut off"):
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
/// - a request whose headers exceed the decoder limits is answered `431` in the spec's error
///   shape and the connection closed (Hummingbird itself would answer a bare `400`);
/// - a request the HTTP parser refuses before its head is complete (request smuggling with
///   `Content-Length` and `Transfer-Encoding` or differing `Content-Length`s, invalid header
///   characters, a malformed request line) is answered `400 INVALID_REQUEST` in the spec's
///   error shape and the connection closed (Hummingbird itself would answer a bare `400` with
///   no body). A parser error inside a request whose response is under way is passed on to
///   whoever owns that response;
/// - `Expect: 100-continue` is answered `100 Continue` at once (Hummingbird does not, and
///   clients such as curl would wait a second before sending the body).
/// Both error answers carry a generated `X-Request-Id`, like every other response.
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

    init(headerReadTimeout: TimeAmount, idleTimeout: TimeAmount?) {
        watcher = RequestStartWatcher(headerReadTimeout: headerReadTimeout)
        self.idleTimeout = idleTimeout
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
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if lingering { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            keepAliveAfter.append(head.isKeepAlive)
            noteActivity()
            watcher.headArrived()
            if head.headers.contains(name: "expect"), declaresBody(head.headers),
               head.headers["expect"].contains(where: { HeaderName.equals($0, "100-continue") }) {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
            }
        case .body:
            break
        case .end:
            noteActivity()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        watcher.responseEnded()
        let keepAlive = keepAliveAfter.popFirst() ?? true
        noteActivity()
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
            answerAndClose(context, status: .requestHeaderFieldsTooLarge, code: "HEADERS_TOO_LARGE", message: "the request headers are too large")
        } else if requestsInFlight == 0 {
            answerAndClose(context, status: .badRequest, code: "INVALID_REQUEST", message: "the request is malformed")
        } else {
            context.fireErrorCaught(error)
        }
    }

    private func declaresBody(_ headers: HTTPHeaders) -> Bool {
        headers.contains(name: "transfer-encoding") || (headers.first(name: "content-length").flatMap { Int($0) } ?? 0) > 0
    }

    private func answerAndClose(_ context: ChannelHandlerContext, status: HTTPResponse.Status, code: String, message: String) {
        guard !answered else { return }
        answered = true
        watcher.headArrived()
        var (head, body) = GatewayError(status, code, message).channelParts(requestID: RequestIDMiddleware.generate())
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
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
