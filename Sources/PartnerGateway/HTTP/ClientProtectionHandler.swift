import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Sits in the public listener's pipeline after HTTP decoding (SPEC §2.4 "slow or oversized
/// clients are cut off"):
/// - a request head must arrive whole within `headerReadTimeout` of the connection opening
///   (first request) or of its first byte (later requests on a keep-alive connection; the gap
///   between requests is `server.idle_timeout`'s business), else the connection is closed.
///   Seeing that first byte takes a raw-bytes handler in front of the HTTP decoder,
///   ``RequestStartWatcher``, which this handler installs and drives;
/// - a request whose headers exceed the decoder limits is answered `431` in the spec's error
///   shape and the connection closed (Hummingbird itself would answer a bare `400`);
/// - a request the HTTP parser refuses before its head is complete (request smuggling with
///   `Content-Length` and `Transfer-Encoding` or differing `Content-Length`s, invalid header
///   characters, a malformed request line) is answered `400 INVALID_REQUEST` in the spec's
///   error shape and the connection closed (Hummingbird itself would answer a bare `400` with
///   no body). A parser error inside a request whose response is under way is left to
///   Hummingbird, which owns that response;
/// - `Expect: 100-continue` is answered `100 Continue` at once (Hummingbird does not, and
///   clients such as curl would wait a second before sending the body).
/// Both error answers carry a generated `X-Request-Id`, like every other response.
final class ClientProtectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let watcher: RequestStartWatcher
    /// Request heads passed on whose response has not ended yet.
    private var requestsInFlight = 0
    private var answered = false

    init(headerReadTimeout: TimeAmount) {
        watcher = RequestStartWatcher(headerReadTimeout: headerReadTimeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        try? context.pipeline.syncOperations.addHandler(watcher, position: .first)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            requestsInFlight += 1
            watcher.headArrived()
            let declaresBody = head.headerFields[.transferEncoding] != nil || (head.headerFields[.contentLength].flatMap { Int($0) } ?? 0) > 0
            if declaresBody, head.headerFields[.expect]?.lowercased() == "100-continue" {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            watcher.responseEnded()
            if requestsInFlight > 0 { requestsInFlight -= 1 }
        }
        context.write(data, promise: promise)
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

    private func answerAndClose(_ context: ChannelHandlerContext, status: HTTPResponse.Status, code: String, message: String) {
        guard !answered else { return }
        answered = true
        watcher.headArrived()
        var (head, body) = GatewayError(status, code, message).channelParts(requestID: RequestIDMiddleware.generate())
        head.headerFields[.connection] = "close"
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}
