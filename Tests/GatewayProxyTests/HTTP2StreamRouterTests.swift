import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import Testing

@testable import GatewayEdge
@testable import GatewayProxy

/// ``HTTP2StreamRouter`` between two embedded HTTP/2 endpoints (a client `NIOHTTP2Handler` and
/// the gateway's), with exchanges the test drives in place of the proxy engine: owned streams
/// answered from frames, every other stream passed on frames and all, resets and flow control.
@Suite("HTTP/2 proxied streams driven from the connection's frames")
struct HTTP2StreamRouterTests {
    /// Takes requests for `/proxied...`; the test writes their responses.
    final class ScriptedSource: ProxiedRequestSource {
        var exchanges: [HTTP2StreamID: ScriptedExchange] = [:]
        var heads: [HTTPRequestHead] = []

        func makeExchange(
            for head: ClientRequestHead, answeringThrough client: any ProxyDownstream,
            memo: inout ProxyEngine.ConnectionMemo, on eventLoop: any EventLoop
        ) -> (any ProxiedRequestExchange)? {
            guard takes(head, memo: &memo), let stream = client as? HTTP2ProxyStream else { return nil }
            heads.append(head.requestHead)
            let exchange = ScriptedExchange(stream: stream)
            exchanges[stream.id] = exchange
            return exchange
        }

        func takes(_ head: ClientRequestHead, memo: inout ProxyEngine.ConnectionMemo) -> Bool {
            head.target.hasPrefix("/proxied")
        }
    }

    final class ScriptedExchange: ProxiedRequestExchange {
        let stream: HTTP2ProxyStream
        var closedCount = 0
        var writableCount = 0
        var bodyBytes = 0
        var requestEnded = false
        var readsCompleted = 0
        var startedCount = 0

        init(stream: HTTP2ProxyStream) {
            self.stream = stream
        }

        func start(memo: inout ProxyEngine.ConnectionMemo) { startedCount += 1 }

        func requestPart(_ part: HTTPServerRequestPart) {
            switch part {
            case .body(let chunk): bodyBytes += chunk.readableBytes
            case .end: requestEnded = true
            case .head: Issue.record("a head handed over as a body part")
            }
        }

        func clientFailed(_ error: any Error) { Issue.record("unexpected \(error)") }
        func clientReadComplete() { readsCompleted += 1 }
        func clientWritabilityChanged() { writableCount += 1 }
        func clientClosed() { closedCount += 1 }
        /// How often the listener's drain reached it.
        var drains = 0
        func drain() { drains += 1 }
    }

    /// Records the frames that reach it: the client's application on one side, what the
    /// multiplexer passes on or gives its child channels on the other. Used on the embedded
    /// event loop only.
    final class FrameRecorder: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTP2Frame
        var frames: [HTTP2Frame] = []

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            frames.append(unwrapInboundIn(data))
        }

        /// The frames of `stream`, as "KIND[ END] [body]".
        func described(_ stream: HTTP2StreamID) -> [String] {
            frames.filter { $0.streamID == stream }.map { frame in
                switch frame.payload {
                case .headers(let headers): "HEADERS\(headers.endStream ? " END" : "") \(headers.headers.first(name: ":status") ?? headers.headers.first(name: ":path") ?? "")"
                case .data(let data): "DATA\(data.endStream ? " END" : "") \(data.data.readableBytes)"
                case .windowUpdate(let increment): "WINDOW_UPDATE \(increment)"
                case .rstStream(let code): "RST \(code == .internalError ? "INTERNAL_ERROR" : "\(code.networkCode)")"
                default: "other"
                }
            }
        }
    }

    /// A child channel's frames, into the connection's ``FrameRecorder``.
    final class ChildStreamRecorder: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame.FramePayload
        let recorder: FrameRecorder

        init(_ recorder: FrameRecorder) {
            self.recorder = recorder
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let id = (try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)) ?? .rootStream
            recorder.frames.append(HTTP2Frame(streamID: id, payload: unwrapInboundIn(data)))
        }
    }

    struct Connection {
        let client: EmbeddedChannel
        let gateway: EmbeddedChannel
        let source = ScriptedSource()
        let passedOn = FrameRecorder()
        let received = FrameRecorder()

        /// `idleTimeout`: the router times it, with the connection manager the listener has after
        /// the multiplexer for the GOAWAY.
        init(clientWindow: Int = 65_535, idleTimeout: TimeAmount? = nil) throws {
            client = EmbeddedChannel()
            gateway = EmbeddedChannel()
            try client.pipeline.syncOperations.addHandler(NIOHTTP2Handler(
                mode: .client,
                initialSettings: [HTTP2Setting(parameter: .initialWindowSize, value: clientWindow)]
            ))
            try client.pipeline.syncOperations.addHandler(received)
            let configuration = HTTP2Limits.configuration(maxHeaderBytes: 8192)
            try gateway.pipeline.syncOperations.addHandler(NIOHTTP2Handler(
                mode: .server, connectionConfiguration: configuration.connection, streamConfiguration: configuration.stream
            ))
            try gateway.pipeline.syncOperations.addHandler(HTTP2StreamRouter(
                source: source, maxHeaderBytes: 8192, bodyReadTimeout: .seconds(5), idleTimeout: idleTimeout
            ))
            // The multiplexer, as on the listener: endpoint streams' child channels, and the
            // connection's own window.
            let passedOn = self.passedOn
            try gateway.pipeline.syncOperations.addHandler(HTTP2StreamMultiplexer(
                mode: .server, channel: gateway, targetWindowSize: HTTP2Limits.targetStreamWindow
            ) { stream in
                stream.eventLoop.makeCompletedFuture { try stream.pipeline.syncOperations.addHandler(ChildStreamRecorder(passedOn)) }
            })
            try gateway.pipeline.syncOperations.addHandler(passedOn)
            if let idleTimeout {
                try gateway.pipeline.syncOperations.addHandler(NIOHTTP2ServerConnectionManagementHandler(
                    eventLoop: gateway.eventLoop,
                    configuration: .init(maxIdleTime: nil, maxAge: nil, maxGraceTime: nil, keepalive: nil)
                ))
            }
            let address = try SocketAddress(ipAddress: "127.0.0.1", port: 1)
            try gateway.connect(to: address).wait()
            try client.connect(to: address).wait()
            try exchangeBytes()
        }

        /// Moves bytes both ways until neither side has anything more to say.
        func exchangeBytes() throws {
            var moved = true
            while moved {
                moved = false
                while let bytes = try client.readOutbound(as: ByteBuffer.self) {
                    try gateway.writeInbound(bytes)
                    moved = true
                }
                while let bytes = try gateway.readOutbound(as: ByteBuffer.self) {
                    try client.writeInbound(bytes)
                    moved = true
                }
            }
        }

        func request(_ stream: HTTP2StreamID, path: String, method: String = "GET", end: Bool = true, extra: [(String, String)] = []) throws {
            var headers: HPACKHeaders = [":method": method, ":path": path, ":scheme": "https", ":authority": "gateway.test"]
            for (name, value) in extra { headers.add(name: name, value: value) }
            client.write(HTTP2Frame(streamID: stream, payload: .headers(.init(headers: headers, endStream: end))), promise: nil)
            client.flush()
            try exchangeBytes()
        }

        /// The stream's exchange, its response's head and `bodySize` bytes of body written and sent.
        func responseStarted(_ stream: HTTP2StreamID, bodySize: Int) throws -> ScriptedExchange {
            let exchange = try #require(source.exchanges[stream])
            exchange.stream.writeResponse(HTTP2StreamRouterTests.head())
            exchange.stream.writeResponse(HTTP2StreamRouterTests.body(bodySize))
            exchange.stream.flushResponse()
            try exchangeBytes()
            return exchange
        }

        /// The stream's exchange answers with a bodiless 200, and the answer is sent.
        func answer(_ stream: HTTP2StreamID) throws {
            let exchange = try #require(source.exchanges[stream])
            exchange.stream.writeResponse(HTTP2StreamRouterTests.head())
            exchange.stream.endResponse(trailers: nil, closingAfter: false)
            try exchangeBytes()
        }

        /// The GOAWAY frames the client has received.
        var goAways: Int {
            received.frames.filter { if case .goAway = $0.payload { true } else { false } }.count
        }

        func send(_ stream: HTTP2StreamID, _ payload: HTTP2Frame.FramePayload) throws {
            client.writeAndFlush(HTTP2Frame(streamID: stream, payload: payload), promise: nil)
            try exchangeBytes()
        }
    }

    fileprivate static func head(_ status: HTTPResponseStatus = .ok) -> HTTPServerResponsePart {
        .head(HTTPResponseHead(version: .http1_1, status: status, headers: ["Content-Type": "application/json", "Connection": "keep-alive"]))
    }

    fileprivate static func body(_ size: Int) -> HTTPServerResponsePart {
        .body(.byteBuffer(ByteBuffer(repeating: UInt8(ascii: "x"), count: size)))
    }

    @Test func aProxiedStreamAndAnEndpointStreamTakeTurnsOnOneConnection() throws {
        let connection = try Connection()
        try connection.request(1, path: "/proxied/a")
        try connection.request(3, path: "/v1/auth/otp", method: "POST", end: false)
        try connection.send(3, .data(.init(data: .byteBuffer(ByteBuffer(string: "{}")), endStream: true)))
        try connection.request(5, path: "/proxied/b?x=1")

        #expect(connection.source.heads.map(\.uri) == ["/proxied/a", "/proxied/b?x=1"])
        #expect(connection.source.heads.first?.headers["host"] == ["gateway.test"])
        // The endpoint stream's frames, all of them, reach the multiplexer; the owned ones none.
        #expect(connection.passedOn.described(3) == ["HEADERS /v1/auth/otp", "DATA END 2"])
        #expect(connection.passedOn.described(1).isEmpty && connection.passedOn.described(5).isEmpty)

        let second = try #require(connection.source.exchanges[5]).stream
        second.writeResponse(Self.head(.created))
        second.endResponse(trailers: nil, closingAfter: false)
        let first = try #require(connection.source.exchanges[1]).stream
        first.writeResponse(Self.head())
        first.writeResponse(Self.body(11))
        first.endResponse(trailers: nil, closingAfter: false)
        try connection.exchangeBytes()
        // END_STREAM on the last frame, no empty DATA frame after it; HTTP/1's `Connection` left out.
        #expect(connection.received.described(5) == ["HEADERS END 201"])
        #expect(connection.received.described(1) == ["HEADERS 200", "DATA END 11"])
        let responseHead = connection.received.frames.first { $0.streamID == 1 }
        guard case .headers(let headers) = responseHead?.payload else { Issue.record("no HEADERS"); return }
        #expect(headers.headers.first(name: "content-type") == "application/json")
        #expect(headers.headers.first(name: "connection") == nil)
        // The streams closed with their responses: nothing counts as the client going away.
        #expect(connection.source.exchanges.values.allSatisfy { $0.closedCount == 1 && $0.stream.closed })
    }

    @Test func headsTheEdgeRulesRefuseGoToTheMultiplexerForTheirResponse() throws {
        let connection = try Connection()
        try connection.request(1, path: "/proxied/a", extra: [("authorization", "Bearer a"), ("authorization", "Bearer b")])
        try connection.request(3, path: "/proxied/a", extra: [("x-big", String(repeating: "v", count: 9000))])
        try connection.request(5, path: "/proxied/../v1/admin")
        #expect(connection.source.heads.isEmpty)
        #expect(connection.passedOn.described(1) == ["HEADERS END /proxied/a"])
        #expect(connection.passedOn.described(3) == ["HEADERS END /proxied/a"])
        #expect(connection.passedOn.described(5).count == 1)
    }

    private static func data(_ size: Int, end: Bool = false) -> HTTP2Frame.FramePayload {
        .data(.init(data: .byteBuffer(ByteBuffer(repeating: UInt8(ascii: "b"), count: size)), endStream: end))
    }

    @Test func aBodyLargerThanTheInitialWindowIsCreditedOnlyAsTheExchangeTakesIt() throws {
        let connection = try Connection()
        try connection.request(1, path: "/proxied/upload", method: "POST", end: false)
        let exchange = try #require(connection.source.exchanges[1])
        #expect(connection.source.heads.first?.headers["transfer-encoding"] == ["chunked"])
        #expect(exchange.readsCompleted == 1)
        // The upstream is slow: what arrives waits. The window is opened up to the target once,
        // counting what waits as unread, so the client can never be more than that ahead.
        exchange.stream.pauseRequestBody()
        for _ in 0..<4 { try connection.send(1, Self.data(15_000)) }
        #expect(exchange.bodyBytes == 0)
        let firstCredit = HTTP2Limits.targetStreamWindow - HTTP2Limits.initialStreamWindow
        #expect(connection.received.described(1) == ["WINDOW_UPDATE \(firstCredit)"])

        exchange.stream.resumeRequestBody()
        try connection.exchangeBytes()
        #expect(exchange.bodyBytes == 60_000)
        // Past the first 65,535 bytes, as the credit allows; none of it reaches the multiplexer.
        for _ in 0..<7 { try connection.send(1, Self.data(15_000)) }
        try connection.send(1, Self.data(10, end: true))
        #expect(exchange.bodyBytes == 165_010)
        #expect(exchange.requestEnded)
        #expect(connection.passedOn.frames.allSatisfy { $0.streamID == .rootStream })
        #expect(exchange.closedCount == 0)
    }

    @Test func aStalledBodyIs408AndTheStreamIsReset() throws {
        let connection = try Connection()
        try connection.request(1, path: "/proxied/upload", method: "PUT", end: false, extra: [("content-length", "100")])
        try connection.send(1, Self.data(10))
        let exchange = try #require(connection.source.exchanges[1])
        connection.gateway.embeddedEventLoop.advanceTime(by: .seconds(4))
        try connection.exchangeBytes()
        #expect(connection.received.described(1).allSatisfy { $0.hasPrefix("WINDOW_UPDATE") })
        connection.gateway.embeddedEventLoop.advanceTime(by: .seconds(2))
        try connection.exchangeBytes()
        let answer = connection.received.described(1).filter { !$0.hasPrefix("WINDOW_UPDATE") }
        #expect(answer.first == "HEADERS 408")
        #expect(answer.dropFirst().first?.hasPrefix("DATA END") == true)
        #expect(answer.last == "RST 0")
        #expect(exchange.closedCount == 1)
    }

    @Test func aStalledBodyAfterTheResponseStartedResetsTheStreamWithout408() throws {
        let connection = try Connection()
        try connection.request(1, path: "/proxied/upload", method: "PUT", end: false, extra: [("content-length", "100")])
        try connection.send(1, Self.data(10))
        let exchange = try connection.responseStarted(1, bodySize: 5)
        connection.gateway.embeddedEventLoop.advanceTime(by: .seconds(6))
        try connection.exchangeBytes()
        let answer = connection.received.described(1).filter { !$0.hasPrefix("WINDOW_UPDATE") }
        #expect(answer == ["HEADERS 200", "DATA 5", "RST INTERNAL_ERROR"])
        #expect(exchange.closedCount == 1)
    }

    @Test func aResetMidResponseEndsThatExchangeAndOnlyThatStream() throws {
        let connection = try Connection()
        try connection.request(1, path: "/proxied/slow")
        try connection.request(3, path: "/proxied/fast")
        let slow = try connection.responseStarted(1, bodySize: 100)
        try connection.send(1, .rstStream(.cancel))
        #expect(slow.closedCount == 1)
        #expect(slow.stream.closed)
        // Whatever the exchange still writes goes nowhere; the multiplexer never saw the stream.
        slow.stream.writeResponse(Self.body(100))
        slow.stream.endResponse(trailers: nil, closingAfter: false)
        try connection.exchangeBytes()
        #expect(connection.received.described(1) == ["HEADERS 200", "DATA 100"])
        #expect(connection.passedOn.frames.allSatisfy { $0.streamID == .rootStream })

        let fast = try #require(connection.source.exchanges[3])
        #expect(fast.closedCount == 0)
        fast.stream.writeResponse(Self.head())
        fast.stream.endResponse(trailers: nil, closingAfter: false)
        try connection.exchangeBytes()
        #expect(connection.received.described(3) == ["HEADERS END 200"])
    }

    @Test func anAbortedResponseResetsItsStreamOnly() throws {
        let connection = try Connection()
        try connection.request(1, path: "/proxied/a")
        let exchange = try connection.responseStarted(1, bodySize: 10)
        exchange.stream.abortResponse()
        try connection.exchangeBytes()
        #expect(connection.received.described(1) == ["HEADERS 200", "DATA 10", "RST INTERNAL_ERROR"])
        #expect(connection.gateway.isActive)
        #expect(exchange.stream.closed)
    }

    @Test func aResponseLargerThanTheClientsWindowWaitsForItsWindowUpdate() throws {
        let connection = try Connection(clientWindow: 1000)
        try connection.request(1, path: "/proxied/large")
        let exchange = try connection.responseStarted(1, bodySize: 10_000)
        // The client's window let 1000 bytes through; the rest waits, and so must the upstream.
        #expect(connection.received.described(1) == ["HEADERS 200", "DATA 1000"])
        #expect(!exchange.stream.responseWritable)
        #expect(exchange.writableCount == 0)

        try connection.send(1, .windowUpdate(windowSizeIncrement: 20_000))
        #expect(connection.received.described(1) == ["HEADERS 200", "DATA 1000", "DATA 9000"])
        #expect(exchange.stream.responseWritable)
        #expect(exchange.writableCount == 1)
        exchange.stream.endResponse(trailers: nil, closingAfter: false)
        try connection.exchangeBytes()
        #expect(connection.received.described(1).last == "DATA END 0")
    }

    @Test func anOpenOwnedStreamKeepsTheConnectionFromBeingIdle() throws {
        let connection = try Connection(idleTimeout: .seconds(1))
        try connection.request(1, path: "/proxied/slow")
        connection.gateway.embeddedEventLoop.advanceTime(by: .seconds(3))
        try connection.exchangeBytes()
        #expect(connection.goAways == 0)
        #expect(connection.gateway.isActive)

        try connection.answer(1)
        connection.gateway.embeddedEventLoop.advanceTime(by: .seconds(2))
        try connection.exchangeBytes()
        #expect(connection.goAways >= 1)
    }

    /// Rapid reset: HEADERS and RST_STREAM in one read. The exchange is told the client went
    /// and never starts (no admission, no upstream connection); one whose head came alone starts
    /// at the end of its read.
    @Test func aStreamResetInTheReadOfItsHeadNeverStarts() throws {
        let connection = try Connection()
        let head: HPACKHeaders = [":method": "GET", ":path": "/proxied/reset", ":scheme": "https", ":authority": "gateway.test"]
        connection.client.write(HTTP2Frame(streamID: 1, payload: .headers(.init(headers: head, endStream: true))), promise: nil)
        connection.client.write(HTTP2Frame(streamID: 1, payload: .rstStream(.cancel)), promise: nil)
        connection.client.flush()
        // Both frames in one read of the gateway's.
        var bytes = ByteBuffer()
        while var frame = try connection.client.readOutbound(as: ByteBuffer.self) { bytes.writeBuffer(&frame) }
        try connection.gateway.writeInbound(bytes)
        try connection.exchangeBytes()
        let reset = try #require(connection.source.exchanges[1])
        #expect(reset.startedCount == 0)
        #expect(reset.closedCount == 1)

        try connection.request(3, path: "/proxied/kept")
        let kept = try #require(connection.source.exchanges[3])
        #expect(kept.startedCount == 1)
        #expect(kept.closedCount == 0)
    }

    /// The client's FIN ends the connection and every exchange on it at once.
    @Test func theClientClosingItsSideClosesTheConnection() throws {
        let connection = try Connection()
        try connection.request(1, path: "/proxied/a")
        connection.gateway.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(!connection.gateway.isActive)
        #expect(connection.source.exchanges[1]?.closedCount == 1)
    }

    /// A connection on which no stream ever opens is idle from its start; a stream opening
    /// puts the timeout off until the last open one has ended.
    @Test func aConnectionWithNoStreamOpenIsSentGoAwayAfterTheIdleTimeout() throws {
        let connection = try Connection(idleTimeout: .seconds(1))
        connection.gateway.embeddedEventLoop.advanceTime(by: .milliseconds(600))
        try connection.request(1, path: "/proxied/a")
        try connection.answer(1)
        // One second from the connection's start, but 0.4 s after its stream ended.
        connection.gateway.embeddedEventLoop.advanceTime(by: .milliseconds(400))
        try connection.exchangeBytes()
        #expect(connection.goAways == 0)
        connection.gateway.embeddedEventLoop.advanceTime(by: .milliseconds(600))
        try connection.exchangeBytes()
        #expect(connection.goAways == 1)

        let untouched = try Connection(idleTimeout: .seconds(1))
        untouched.gateway.embeddedEventLoop.advanceTime(by: .milliseconds(999))
        try untouched.exchangeBytes()
        #expect(untouched.goAways == 0)
        untouched.gateway.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        try untouched.exchangeBytes()
        #expect(untouched.goAways == 1)
    }

    /// The idle GOAWAY's PING is never acknowledged: the connection closes after the grace.
    @Test func anIdleConnectionClosesWithoutThePingAcknowledgement() throws {
        let connection = try Connection(idleTimeout: .seconds(1))
        try connection.request(1, path: "/proxied/a")
        try connection.answer(1)
        // Idle: GOAWAY and PING go out, and the client says nothing back.
        connection.gateway.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(connection.gateway.isActive)
        connection.gateway.embeddedEventLoop.advanceTime(by: HTTP2Limits.goAwayGrace - .milliseconds(1))
        #expect(connection.gateway.isActive)
        connection.gateway.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!connection.gateway.isActive)
    }

    @Test func theConnectionClosingEndsEveryOwnedExchange() throws {
        let connection = try Connection()
        try connection.request(1, path: "/proxied/a")
        try connection.request(3, path: "/proxied/b")
        try connection.gateway.close().wait()
        #expect(connection.source.exchanges.values.map(\.closedCount) == [1, 1])
    }
}
