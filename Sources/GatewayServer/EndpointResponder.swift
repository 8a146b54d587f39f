import GatewayEdge
import GatewayEndpoints
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// The last handler of an HTTP/1.1 connection (``GatewayHTTP1Channel``) and of an HTTP/2
/// stream's child channel (``HTTP2StreamSetup``), on every listener: every request reaching it
/// is for the gateway's own endpoints (the proxy engine took the others in front of it). At a
/// request's head it starts a task on the connection's event loop (``EventLoopTaskExecutor``)
/// that has ``Endpoints`` answer it, passes the body on as it arrives
/// (``EndpointRequestBody``), and writes the answer's parts itself: a body of known length
/// goes out with its head, in one write.
///
/// What to do is the ``StateMachine``'s. The connection's rules (the order of requests and
/// answers, keep-alive, timeouts, `100 Continue`) stay with ``HTTP1ConnectionHandler`` or the
/// stream's edge handler, in front of it; between requests nothing is held here, so an idle
/// connection that was answered here parks like any other.
final class EndpointResponder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let endpoints: Endpoints
    /// Whether the connection came over TLS (the requests' scheme).
    private let secure: Bool
    private var state = StateMachine(bodyLimit: GatewayRequestContext.bodyLimit)
    private var context: ChannelHandlerContext?
    /// An answer's end waits for the loop's pass to end before it is flushed (``PassFlushes``).
    var passFlushPending = false
    /// The answering tasks' executor preference, made at the first request.
    private var executor: EventLoopTaskExecutor?
    /// The body of the request being answered, while it arrives.
    private var body: EndpointRequestBody?

    init(endpoints: Endpoints, secure: Bool) {
        self.endpoints = endpoints
        self.secure = secure
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        flushIfPending(context)
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch state.read(unwrapInboundIn(data)) {
        case .none:
            break
        case .answer(let head, let hasBody):
            answer(head, hasBody: hasBody, context: context)
        case .pass(let part):
            body?.append(part)
        case .endBody:
            body?.finish()
            body = nil
        case .close:
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch state.failed() {
        case .none:
            break
        case .refuse:
            refuse(context: context)
        case .failBody:
            body?.finish(failure: error)
            body = nil
        case .close:
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.closed()
        body?.finish(failure: ChannelError.eof)
        body = nil
        context.fireChannelInactive()
    }

    private func answer(_ head: HTTPRequestHead, hasBody: Bool, context: ChannelHandlerContext) {
        let request: HTTPRequest
        do {
            request = try HTTPRequest(head, secure: secure, splitCookie: false)
        } catch {
            // Fields HTTPTypes refuses (the edge lets none through; kept for safety).
            state.closed()
            refuse(context: context)
            return
        }
        // A body left unread by an earlier answer is nobody's now.
        body = hasBody ? EndpointRequestBody() : nil
        let requestBody = body.map { RequestBody(asyncSequence: $0) } ?? RequestBody(buffer: ByteBuffer())
        let executor = executor ?? EventLoopTaskExecutor(context.eventLoop)
        self.executor = executor
        let endpoints = endpoints
        let channel = context.channel
        let connection = NIOLoopBound(self, eventLoop: context.eventLoop)
        Task(executorPreference: executor) {
            let response = await endpoints.respond(to: Request(head: request, body: requestBody), channel: channel)
            do {
                try await response.body.write(BodyWriter(connection: connection, head: HTTPResponseHead(response.head)))
            } catch {
                // A streamed body that failed part-way: only closing shows the answer is short.
                channel.close(promise: nil)
            }
        }
    }

    /// `400` in the error shape and close: the input went bad with no request under way.
    private func refuse(context: ChannelHandlerContext) {
        GatewayError.invalidRequest("the request is malformed").write(to: context, closing: true).whenComplete { _ in
            context.close(promise: nil)
        }
    }

    /// Writes what is given of the answer, in order, and flushes; `promise` completes with the
    /// last part. Called on the event loop.
    fileprivate func write(head: HTTPResponseHead?, body: ByteBuffer?, end: HTTPHeaders??, promise: EventLoopPromise<Void>?) {
        guard let context else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        if let head { context.write(wrapOutboundOut(.head(head)), promise: body == nil && end == nil ? promise : nil) }
        if let body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: end == nil ? promise : nil) }
        guard let end else {
            context.flush()
            return
        }
        // First: the next request, read already, may be passed on within this write.
        guard state.answered() else {
            context.write(wrapOutboundOut(.end(end)), promise: promise)
            PassFlushes.flush(self, on: context.eventLoop)
            return
        }
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(end)), promise: written)
        written.futureResult.assumeIsolated().whenComplete { result in
            promise?.completeWith(result)
            context.close(promise: nil)
        }
    }
}

extension EndpointResponder {
    /// Hands the answer to the connection from the answering task. The head waits for the
    /// body's first part, and that part for the next one or the end, so a body of one part
    /// goes out with its head and end at once; the parts of a longer (streamed) body wait for
    /// the connection to take each one.
    struct BodyWriter: ResponseBodyWriter {
        let connection: NIOLoopBound<EndpointResponder>
        /// The answer's head, until written.
        var head: HTTPResponseHead?
        /// The body's part not yet written.
        var held: ByteBuffer?

        init(connection: NIOLoopBound<EndpointResponder>, head: HTTPResponseHead) {
            self.connection = connection
            self.head = head
        }

        mutating func write(_ buffer: ByteBuffer) async throws {
            guard head == nil || held != nil else {
                held = buffer
                return
            }
            let (head, held) = (self.head, self.held)
            (self.head, self.held) = (nil, nil)
            if head != nil || held != nil { send(head: head, body: held, end: nil, waits: false) }
            try await send(head: nil, body: buffer, end: nil, waits: true)?.get()
        }

        consuming func finish(_ trailers: HTTPFields?) async throws {
            send(head: head, body: held, end: .some(trailers.map { HTTPHeaders($0) }), waits: false)
        }

        /// Writes on the connection's event loop, where the task normally runs already; when
        /// `waits`, the future of the last part's write.
        @discardableResult
        private func send(head: HTTPResponseHead?, body: ByteBuffer?, end: HTTPHeaders??, waits: Bool) -> EventLoopFuture<Void>? {
            let connection = connection
            let loop = connection.eventLoop
            let promise = waits ? loop.makePromise(of: Void.self) : nil
            if loop.inEventLoop {
                connection.value.write(head: head, body: body, end: end, promise: promise)
            } else {
                loop.execute { connection.value.write(head: head, body: body, end: end, promise: promise) }
            }
            return promise?.futureResult
        }
    }
}

extension EndpointResponder: PassFlushable {
    func flushAtPassEnd() {
        context?.flush()
    }
}
