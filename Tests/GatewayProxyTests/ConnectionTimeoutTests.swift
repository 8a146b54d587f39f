import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import GatewayEdge
@testable import GatewayProxy

/// Every timeout the connection handlers keep, on an embedded event loop whose clock the test
/// moves: ``DeadlineTimer`` itself, the idle and header read timeouts and the lingering close
/// and the order of answers while closing (``HTTP1ConnectionHandler``,
/// ``RequestStartWatcher``), and the route timeout of an
/// upstream connection (``UpstreamResponseHandler``). No sockets, no waiting.
@Suite("Connection timeouts on a test clock")
struct ConnectionTimeoutTests {
    @Test func aDeadlineTimerFiresOnceAtItsLatestDeadline() {
        let loop = EmbeddedEventLoop()
        var fired: [NIODeadline] = []
        let timer = DeadlineTimer(eventLoop: loop) { fired.append(loop.now) }
        let start = loop.now
        timer.expire(in: .seconds(2))
        loop.advanceTime(by: .seconds(1))
        timer.expire(in: .seconds(2))  // moved on: due at 3 s
        loop.advanceTime(by: .milliseconds(1999))
        #expect(fired.isEmpty)
        loop.advanceTime(by: .milliseconds(1))
        #expect(fired == [start + .seconds(3)])
        loop.advanceTime(by: .seconds(10))
        #expect(fired.count == 1)
    }

    @Test func aClearedDeadlineTimerDoesNotFireAndAnEarlierDeadlineComesForward() {
        let loop = EmbeddedEventLoop()
        var fired = 0
        let timer = DeadlineTimer(eventLoop: loop) { fired += 1 }
        timer.expire(in: .seconds(5))
        timer.set(nil)
        loop.advanceTime(by: .seconds(6))
        #expect(fired == 0)
        timer.expire(in: .seconds(10))
        timer.expire(in: .seconds(1))
        loop.advanceTime(by: .seconds(1))
        #expect(fired == 1)
    }

    // MARK: Client connections

    /// Records half-closures, which an embedded channel cannot do (it closes whole).
    final class HalfCloseRecorder: ChannelOutboundHandler {
        typealias OutboundIn = Any
        var outputClosed = false

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            if mode == .output {
                outputClosed = true
                promise?.succeed(())
            } else {
                context.close(mode: mode, promise: promise)
            }
        }
    }

    private static func clientChannel(
        headerReadTimeout: TimeAmount = .seconds(10),
        idleTimeout: TimeAmount? = .seconds(2),
        recorder: HalfCloseRecorder = HalfCloseRecorder()
    ) async throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(recorder)
        try channel.pipeline.syncOperations.addHandler(HTTP1ConnectionHandler(headerReadTimeout: headerReadTimeout, idleTimeout: idleTimeout, bodyReadTimeout: .seconds(10), maxHeadBytes: 8192, proxy: nil))
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        return channel
    }

    private static func request(_ channel: EmbeddedChannel, keepAlive: Bool = true) throws {
        try channel.writeInbound(ByteBuffer(string: "GET /x HTTP/1.1\r\nHost: x\r\n\(keepAlive ? "" : "Connection: close\r\n")\r\n"))
    }

    private static func respond(_ channel: EmbeddedChannel) throws {
        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
    }

    @Test func anIdleConnectionClosesAfterTheIdleTimeout() async throws {
        let channel = try await Self.clientChannel()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1999))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
    }

    /// The handlers' timers hold them strongly (``DeadlineTimer``: no weak references on the
    /// hot path); closing the connection cancels the timers and lets go of them.
    @Test func aClosedConnectionsHandlersAndTheirTimersAreFreed() async throws {
        weak var clientHandler: HTTP1ConnectionHandler?
        weak var watcher: RequestStartWatcher?
        weak var upstreamHandler: UpstreamResponseHandler?
        try await {
            let client = try await Self.clientChannel()
            try Self.request(client)  // the idle and header read timers armed and moved
            clientHandler = try client.pipeline.syncOperations.handler(type: HTTP1ConnectionHandler.self)
            watcher = try client.pipeline.syncOperations.handler(type: RequestStartWatcher.self)
            _ = try client.finish(acceptAlreadyClosed: true)
            let (upstream, handler) = try Self.upstreamChannel(sink: RecordingSink(), timeout: .seconds(30))  // the route timer armed
            upstreamHandler = handler
            _ = try upstream.finish(acceptAlreadyClosed: true)
        }()
        #expect(clientHandler == nil, "HTTP1ConnectionHandler outlived its connection")
        #expect(watcher == nil, "RequestStartWatcher outlived its connection")
        #expect(upstreamHandler == nil, "UpstreamResponseHandler outlived its connection")
    }

    @Test func aConnectionWithARequestUnderWayIsNotIdle() async throws {
        let channel = try await Self.clientChannel()
        try Self.request(channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive, "closed as idle while its request was under way")
        try Self.respond(channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive, "not closed an idle timeout after its answer")
    }

    @Test func aHeadThatDoesNotArriveInTimeClosesTheConnection() async throws {
        let channel = try await Self.clientChannel(headerReadTimeout: .seconds(1), idleTimeout: nil)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(999))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
    }

    /// A client that had its whole response may send the next head's start before the response's
    /// end has passed through the pipeline (an endpoint ends its response in a write of its
    /// own): that head is timed from the response's end, not left to the idle timeout.
    @Test func aHeadStartedBeforeTheResponseEndedIsStillTimed() async throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(HTTPResponseEncoder(configuration: .init()))
        try channel.pipeline.syncOperations.addHandler(HTTP1ConnectionHandler(headerReadTimeout: .seconds(1), idleTimeout: nil, bodyReadTimeout: .seconds(10), maxHeadBytes: 8192, proxy: nil))
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        try channel.writeInbound(ByteBuffer(string: "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) != nil)
        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: ["content-length": "0"])))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(10))
        try channel.writeInbound(ByteBuffer(string: "GET /healthz HTTP/1.1\r\nX-Partial: "))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(999))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive, "a head started during the answer was never timed")
    }

    @Test func aHeadThatArrivesInTimeKeepsTheConnection() async throws {
        let channel = try await Self.clientChannel(headerReadTimeout: .seconds(1), idleTimeout: nil)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(500))
        try Self.request(channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        #expect(channel.isActive, "closed although the head arrived in time")
    }

    /// A connection whose one request (`Connection: close`) was read and answered: its output
    /// is closed and it lingers.
    private static func lingeringChannel() async throws -> EmbeddedChannel {
        let recorder = HalfCloseRecorder()
        let channel = try await clientChannel(idleTimeout: nil, recorder: recorder)
        try request(channel, keepAlive: false)
        while try channel.readInbound(as: HTTPServerRequestPart.self) != nil {}
        try respond(channel)
        #expect(recorder.outputClosed, "the output was not closed after the answer")
        return channel
    }

    @Test func closingAfterAResponseLingersThenCloses() async throws {
        let channel = try await Self.lingeringChannel()
        // Lingering: what the client still sends is read and dropped, the connection stays
        // until the linger timeout.
        try channel.writeInbound(ByteBuffer(string: "late body"))
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == nil, "a late part was passed on")
        channel.embeddedEventLoop.advanceTime(by: LingerDeadline.silence - .milliseconds(1))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
    }

    @Test func aClientStillSendingKeepsALingeringCloseOpenUpToItsTotal() async throws {
        let channel = try await Self.lingeringChannel()
        // A body still arriving, a part every 4 s: each one postpones the close past the silence...
        var elapsed = TimeAmount.zero
        while elapsed + .seconds(4) < LingerDeadline.total {
            channel.embeddedEventLoop.advanceTime(by: .seconds(4))
            elapsed = elapsed + .seconds(4)
            #expect(channel.isActive, "closed after \(elapsed) while the client was still sending")
            try channel.writeInbound(ByteBuffer(string: "more"))
        }
        // ...but not past the total.
        channel.embeddedEventLoop.advanceTime(by: LingerDeadline.total - elapsed - .milliseconds(1))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive, "a client sending for ever held the connection past the total")
    }

    @Test func requestsPipelinedBehindAClosingOneAreDroppedWhileLingering() async throws {
        let channel = try await Self.lingeringChannel()
        try Self.request(channel)
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == nil, "a request behind the closing one was passed on")
        channel.embeddedEventLoop.advanceTime(by: LingerDeadline.silence)
        #expect(!channel.isActive)
    }

    @Test func aRefusedHeadIsAnsweredAfterTheResponseBeforeItThenLingers() async throws {
        let recorder = HalfCloseRecorder()
        let channel = try await Self.clientChannel(idleTimeout: nil, recorder: recorder)
        try Self.request(channel)
        try channel.writeInbound(ByteBuffer(string: "GET /y HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n"))
        #expect(try channel.readOutbound(as: HTTPServerResponsePart.self) == nil, "the refusal overtook the response before it")
        try Self.respond(channel)
        var statuses: [UInt] = []
        while let part = try channel.readOutbound(as: HTTPServerResponsePart.self) {
            if case .head(let head) = part { statuses.append(head.status.code) }
        }
        #expect(statuses == [200, 400])
        #expect(recorder.outputClosed, "the connection did not close after the refusal")
        channel.embeddedEventLoop.advanceTime(by: LingerDeadline.silence - .milliseconds(1))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
    }

    // MARK: Upstream connections

    /// Records what an upstream connection pushes; pauses after a body part when asked to.
    final class RecordingSink: UpstreamResponseSink {
        var parts: [UpstreamResponsePart] = []
        var failure: UpstreamError?
        var pauseOnBody = false

        func upstreamPart(_ part: UpstreamResponsePart) -> Bool {
            parts.append(part)
            if case .body = part { return !pauseOnBody }
            return true
        }

        func upstreamReadComplete() {}
        func upstreamWritabilityChanged() {}

        func upstreamFailed(_ error: UpstreamError) {
            failure = error
        }
    }

    private static func upstreamChannel(sink: RecordingSink, timeout: TimeAmount) throws -> (EmbeddedChannel, UpstreamResponseHandler) {
        let channel = EmbeddedChannel()
        let handler = UpstreamResponseHandler(eventLoop: channel.embeddedEventLoop)
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        var head = UpstreamRequestHead(method: .GET, target: "/", allocator: channel.allocator)
        head.end(framing: .bodiless)
        try handler.send(head, to: sink, timeout: timeout)
        return (channel, handler)
    }

    @Test func anUpstreamSilentForTheRouteTimeoutFailsWithTimeout() throws {
        let sink = RecordingSink()
        let (channel, _) = try Self.upstreamChannel(sink: sink, timeout: .seconds(1))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(999))
        #expect(sink.failure == nil)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(sink.failure == .timeout)
    }

    @Test func eachPartTheUpstreamSendsRestartsTheRouteTimeout() throws {
        let sink = RecordingSink()
        let (channel, _) = try Self.upstreamChannel(sink: sink, timeout: .seconds(1))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(900))
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(900))
        #expect(sink.failure == nil, "timed out although the head arrived 900 ms ago")
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(100))
        #expect(sink.failure == .timeout)
    }

    @Test func waitingForASlowClientDoesNotCountTowardsTheRouteTimeout() throws {
        let sink = RecordingSink()
        sink.pauseOnBody = true
        let (channel, handler) = try Self.upstreamChannel(sink: sink, timeout: .seconds(1))
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"))
        try channel.writeInbound(ByteBuffer(string: "5\r\nchunk\r\n"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(30))
        #expect(sink.failure == nil, "timed out while the client was slow, not the upstream")
        sink.pauseOnBody = false
        handler.resume()
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(sink.failure == .timeout)
    }

    @Test func aCompleteResponseLeavesNoTimerBehind() throws {
        let sink = RecordingSink()
        let (channel, handler) = try Self.upstreamChannel(sink: sink, timeout: .seconds(1))
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        #expect(sink.failure == nil)
        #expect(sink.parts.count == 2)
        #expect(handler.isReusable, "a cleanly ended exchange left the connection unusable")
    }

    /// The route timeout is the upstream's time to answer, counted once the request has been
    /// sent whole (Envoy's rule): a client still sending its body is timed by
    /// `server.body_read_timeout`, which answers it `408`, not `504`.
    @Test func theRouteTimeoutStartsWhenTheRequestBodyHasBeenSent() throws {
        let sink = RecordingSink()
        let channel = EmbeddedChannel()
        let handler = UpstreamResponseHandler(eventLoop: channel.embeddedEventLoop)
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        var head = UpstreamRequestHead(method: .POST, target: "/", allocator: channel.allocator)
        head.end(framing: .length(10))
        try handler.send(head, to: sink, timeout: .seconds(1))
        handler.sendBody(ByteBuffer(string: "12345"))
        handler.flush()
        channel.embeddedEventLoop.advanceTime(by: .seconds(30))
        #expect(sink.failure == nil, "timed out the upstream while the client was still sending the body")
        handler.sendBody(ByteBuffer(string: "67890"))
        handler.sendEnd()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(999))
        #expect(sink.failure == nil)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(sink.failure == .timeout)
    }
}

