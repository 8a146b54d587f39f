import NIOCore
import NIOHTTP1

/// One keep-alive HTTP/1.1 connection to an upstream, used by one request at a time (the
/// pool hands it out exclusively).
///
/// Calls made from the connection's own event loop go straight to the handler; with NIO's
/// loops as Swift's global executor (see `App.main`) that is the common case, so a proxied
/// request usually costs no thread hop at all.
final class UpstreamConnection: Sendable {
    let channel: any Channel
    private let handler: NIOLoopBound<UpstreamResponseHandler>

    init(channel: any Channel, handler: UpstreamResponseHandler) {
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
    }

    var eventLoop: any EventLoop { channel.eventLoop }

    /// The handler itself, for code already running on the connection's loop (the
    /// event-loop fast path, ``FastProxyHandler``); traps anywhere else.
    var handlerOnLoop: UpstreamResponseHandler { handler.value }

    /// Whether it can go back to the pool. Only meaningful once its response has ended.
    var isReusable: Bool {
        get async {
            (try? await onLoop { $0.isReusable }) ?? false
        }
    }

    /// Whether the request's end has been written.
    var requestEnded: Bool {
        get async {
            (try? await onLoop { $0.requestEnded }) ?? false
        }
    }

    func send(_ head: HTTPRequestHead, hasBody: Bool) async throws {
        try await onLoop { try $0.send(head, hasBody: hasBody) }
    }

    func sendBody(_ chunk: ByteBuffer) async throws {
        try await onLoop { $0.sendBody(chunk) }.get()
    }

    func sendEnd() async throws {
        try await onLoop { $0.sendEnd() }.get()
    }

    /// The next response part: at once when it has already been read, else once it arrives.
    func nextPart(timeout: TimeAmount) async throws -> HTTPClientResponsePart {
        switch try await onLoop({ try $0.nextPart(timeout: timeout) }) {
        case .ready(let part): return part
        case .pending(let future): return try await future.get()
        }
    }

    func takeIfComplete() async throws -> [HTTPClientResponsePart]? {
        try await onLoop { $0.takeIfComplete() }
    }

    /// Closes the connection, failing whatever waits on it.
    func abort(_ error: UpstreamError) {
        if eventLoop.inEventLoop {
            handler.value.abort(error)
        } else {
            eventLoop.execute { self.handler.value.abort(error) }
        }
    }

    /// Runs `body` with the handler on the connection's loop: directly when already there
    /// (no suspension, the common case), else by submitting it to the loop.
    private func onLoop<Value: Sendable>(
        _ body: @escaping @Sendable (UpstreamResponseHandler) throws -> Value
    ) async throws -> Value {
        if eventLoop.inEventLoop {
            return try body(handler.value)
        }
        return try await eventLoop.submit { try body(self.handler.value) }.get()
    }
}
