import GatewayPrimitives
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
/// Answers reach it two ways: Hummingbird's (and its own) as parts through ``write(context:data:promise:)``,
/// on their way to NIO's encoder; the proxy engine's as bytes written below the encoder by
/// ``ProxyHandler``, which tells it of their head and end directly
/// (``answerHeadWritten(status:)``, ``answerEnded(promise:writeEnd:)``). For the answers
/// through the encoder it drops the body of an answer to a `HEAD` request (the encoder is not
/// paired with the decoder: proxied answers pass it by, and it would count requests it never
/// answers; docs/DECISIONS.md, "Answers written as bytes").
///
/// The bookkeeping of requests and responses is ``ClientConnectionStateMachine``'s, the
/// timing of bodies ``BodyReadDeadline``'s; the idle, body and lingering-close deadlines are
/// each a ``DeadlineTimer``.
///
/// The idle and shutdown rules are Hummingbird's `HTTPConnectionStateHandler`'s, which this
/// replaces (``GatewayHTTP1Channel``): that handler sits after the proxy engine and would count
/// only the requests Hummingbird sees.
package final class ClientProtectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPServerRequestPart
    package typealias InboundOut = HTTPServerRequestPart
    package typealias OutboundIn = HTTPServerResponsePart
    package typealias OutboundOut = HTTPServerResponsePart

    /// How long a connection closing after its response still reads what the client sends.
    package static let lingerTimeout = TimeAmount.seconds(5)

    private let watcher: RequestStartWatcher
    private let idleTimeout: TimeAmount?
    /// The public listener's routes: their bodies are limited between reads, every other
    /// body (the gateway's own endpoints) as a whole.
    private let proxiedRoutes: (any ProxiedPaths)?
    private var state = ClientConnectionStateMachine()
    private var bodyDeadline: BodyReadDeadline
    private var context: ChannelHandlerContext?
    /// Due `idleTimeout` after a request head or end was last read or a response last ended.
    private var idleTimer: DeadlineTimer?
    private var bodyTimer: DeadlineTimer?
    /// Due ``lingerTimeout`` after the output was closed for a lingering close.
    private var lingerTimer: DeadlineTimer?
    /// For each request read and not yet answered, oldest first: whether it is a `HEAD`.
    private var awaitingAnswer = CircularBuffer<Bool>(initialCapacity: 2)
    /// The answer being written through ``write(context:data:promise:)`` is to a `HEAD`: its
    /// body is dropped.
    private var answeringHEAD = false

    package init(headerReadTimeout: TimeAmount, idleTimeout: TimeAmount?, bodyReadTimeout: TimeAmount, proxiedRoutes: (any ProxiedPaths)?) {
        watcher = RequestStartWatcher(headerReadTimeout: headerReadTimeout)
        self.idleTimeout = idleTimeout
        self.proxiedRoutes = proxiedRoutes
        bodyDeadline = BodyReadDeadline(timeout: bodyReadTimeout)
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // Strong references, let go of when the timers are cancelled (``DeadlineTimer``).
        idleTimer = DeadlineTimer(eventLoop: context.eventLoop) {
            self.idleDeadlinePassed()
        }
        bodyTimer = DeadlineTimer(eventLoop: context.eventLoop) {
            self.bodyDeadlinePassed()
        }
        lingerTimer = DeadlineTimer(eventLoop: context.eventLoop) {
            self.context?.close(promise: nil)
        }
        try? context.pipeline.syncOperations.addHandler(watcher, position: .first)
        if context.channel.isActive { noteActivity() }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
        self.context = nil
    }

    package func channelActive(context: ChannelHandlerContext) {
        noteActivity()
        context.fireChannelActive()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        cancelTimers()
        _ = bodyDeadline.bodyEnded()
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if state.discardsInput { return }
        switch unwrapInboundIn(data) {
        case .head(let received):
            awaitingAnswer.append(received.method == .HEAD)
            let head: HTTPRequestHead
            switch RequestHeadRules.admit(received) {
            case .success(let admitted):
                head = admitted
            case .failure(let error):
                watcher.headArrived()
                perform(state.headRefused(error), context: context)
                return
            }
            state.headAdmitted(keepAlive: head.isKeepAlive)
            noteActivity()
            watcher.headArrived()
            let hasBody = declaresBody(head.headers)
            if hasBody {
                bodyTimer?.apply(bodyDeadline.headRead(hasBody: true, limit: BodyReadDeadline.Limit.of(target: head.uri, proxiedRoutes: proxiedRoutes), now: context.eventLoop.now))
            }
            if hasBody, head.headers.contains(name: "expect"),
               head.headers["expect"].contains(where: { HeaderName.equals($0, "100-continue") }) {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
            }
            context.fireChannelRead(wrapInboundOut(.head(head)))
            return
        case .body:
            bodyTimer?.apply(bodyDeadline.bodyRead())
        case .end:
            bodyTimer?.apply(bodyDeadline.bodyEnded())
            watcher.requestEnded()
            noteActivity()
        }
        context.fireChannelRead(data)
    }

    package func read(context: ChannelHandlerContext) {
        bodyTimer?.apply(bodyDeadline.readRequested(now: context.eventLoop.now))
        context.read()
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            let status = Int(head.status.code)
            if Self.isFinal(status) { answeringHEAD = awaitingAnswer.popFirst() ?? false }
            state.responseHeadWritten(statusCode: status)
            context.write(data, promise: promise)
        case .body:
            guard !answeringHEAD else {
                promise?.succeed()
                return
            }
            context.write(data, promise: promise)
        case .end:
            answeringHEAD = false
            responseEnded(context: context, promise: promise) { context.write(data, promise: $0) }
        }
    }

    /// A proxied answer's head went out below this handler (``ProxyHandler``).
    package func answerHeadWritten(status: Int) {
        if Self.isFinal(status) { _ = awaitingAnswer.popFirst() }
        state.responseHeadWritten(statusCode: status)
    }

    /// A proxied answer ends: `writeEnd` writes its last bytes below this handler (completing
    /// the promise it is given once they are written), then what the end means for the
    /// connection is done exactly as for an answer through ``write(context:data:promise:)``.
    package func answerEnded(promise: EventLoopPromise<Void>?, writeEnd: (EventLoopPromise<Void>?) -> Void) {
        guard let context else {
            writeEnd(promise)
            return
        }
        responseEnded(context: context, promise: promise, writeEnd: writeEnd)
    }

    /// A `1xx` other than `101` is followed by the final answer to the same request.
    private static func isFinal(_ status: Int) -> Bool {
        status >= 200 || status == 101
    }

    /// The end of an answer, written by `writeEnd`: the connection's rules for it (keep-alive
    /// or close, a lingering close, a refused request answered next).
    private func responseEnded(context: ChannelHandlerContext, promise: EventLoopPromise<Void>?, writeEnd: (EventLoopPromise<Void>?) -> Void) {
        watcher.responseEnded()
        let action = state.responseEnded()
        noteActivity()
        switch action {
        case .write:
            writeEnd(promise)
        case .writeThenAnswerRefusal(let error):
            writeEnd(promise)
            perform(.answerRefusal(error), context: context)
        case .flushThenLinger:
            flush(context: context, promise: promise, writeEnd: writeEnd) { self.closeLingering(context) }
        case .flushThenClose:
            flush(context: context, promise: promise, writeEnd: writeEnd) { context.close(promise: nil) }
        }
    }

    /// Writes the end and flushes; `then` once it is written.
    private func flush(
        context: ChannelHandlerContext,
        promise: EventLoopPromise<Void>?,
        writeEnd: (EventLoopPromise<Void>?) -> Void,
        then: @escaping () -> Void
    ) {
        let written = context.eventLoop.makePromise(of: Void.self)
        writeEnd(written)
        context.flush()
        written.futureResult.assumeIsolated().whenComplete { result in
            promise?.completeWith(result)
            then()
        }
    }

    private func perform(_ action: ClientConnectionStateMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .close:
            context.close(promise: nil)
        case .answerAndClose(let error):
            watcher.headArrived()
            writeError(error, context: context).whenComplete { _ in context.close(promise: nil) }
        case .answerRefusal(let error):
            writeError(error, context: context).whenComplete { _ in self.closeLingering(context) }
        }
    }

    /// Closes as nginx's lingering close does: the response is out, so stop sending (FIN),
    /// then read and discard what the client still sends (a body the request was answered
    /// without) until it closes its side or ``lingerTimeout`` passes. Closing outright with
    /// unread input makes the kernel answer with a reset, which can destroy the response
    /// before the client has read it.
    private func closeLingering(_ context: ChannelHandlerContext) {
        guard state.startLingering() else { return }
        context.close(mode: .output, promise: nil)
        lingerTimer?.expire(in: Self.lingerTimeout)
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        perform(state.quiesce(), context: context)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError,
              let action = state.parserFailed(headerOverflow: parserError == .headerOverflow) else {
            context.fireErrorCaught(error)
            return
        }
        perform(action, context: context)
    }

    private func declaresBody(_ headers: HTTPHeaders) -> Bool {
        headers.contains(name: "transfer-encoding") || (headers.first(name: "content-length").flatMap { Int($0) } ?? 0) > 0
    }

    /// Writes `error` as a whole response announcing `Connection: close`.
    private func writeError(_ error: GatewayError, context: ChannelHandlerContext) -> EventLoopFuture<Void>.Isolated {
        var (head, body) = error.channelParts(requestID: RequestID.generate())
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
    private func idleDeadlinePassed() {
        if state.idleDeadlinePassed() {
            context?.close(promise: nil)
        } else {
            noteActivity()
        }
    }

    /// The body stalled: `408` if nothing of the answer went out yet, and close.
    private func bodyDeadlinePassed() {
        guard let context, bodyDeadline.deadlinePassed() else { return }
        perform(state.bodyTimedOut(), context: context)
    }

    private func cancelTimers() {
        idleTimer?.cancel()
        bodyTimer?.cancel()
        lingerTimer?.cancel()
    }
}
