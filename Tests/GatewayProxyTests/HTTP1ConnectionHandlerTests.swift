import GatewayEdge
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import GatewayProxy

/// ``HTTP1ConnectionHandler`` behind NIO's HTTP/1 encoder, in memory: bytes in,
/// bytes out, with exchanges the test drives in place of the proxy engine (requests for
/// `/proxied...`) and the test as Hummingbird (every other request, read from the channel's
/// inbound side and answered as parts). Keep-alive, closing, `HEAD` and pipelining across both
/// kinds of answer, and the edge's `408` and `431`.
@Suite("HTTP/1 connection handler across proxied and endpoint answers (in memory)")
struct HTTP1ConnectionHandlerTests {
    static let bodyTimeout = TimeAmount.seconds(3)

    /// Takes requests for `/proxied...`; the test writes their responses.
    final class ScriptedSource: ProxiedRequestSource {
        var exchanges: [ScriptedExchange] = []

        func makeExchange(
            for head: ClientRequestHead, answeringThrough client: any ProxyDownstream,
            memo: inout ProxyEngine.ConnectionMemo, on eventLoop: any EventLoop
        ) -> (any ProxiedRequestExchange)? {
            guard takes(head, memo: &memo) else { return nil }
            let exchange = ScriptedExchange(head: head, client: client)
            exchanges.append(exchange)
            return exchange
        }

        func takes(_ head: ClientRequestHead, memo: inout ProxyEngine.ConnectionMemo) -> Bool {
            head.target.hasPrefix("/proxied")
        }
    }

    final class ScriptedExchange: ProxiedRequestExchange {
        let head: ClientRequestHead
        let client: any ProxyDownstream
        var body = ""
        var requestEnded = false
        var closedCount = 0

        init(head: ClientRequestHead, client: any ProxyDownstream) {
            self.head = head
            self.client = client
        }

        func start(memo: inout ProxyEngine.ConnectionMemo) {}
        func requestPart(_ part: HTTPServerRequestPart) {
            switch part {
            case .body(let chunk): body += String(buffer: chunk)
            case .end: requestEnded = true
            case .head: Issue.record("a head handed over as a body part")
            }
        }
        /// The request could not be read to its end (the client went mid-body).
        var failures = 0
        func clientFailed(_ error: any Error) { failures += 1 }
        func clientReadComplete() {}
        func clientWritabilityChanged() {}
        func clientClosed() { closedCount += 1 }
        /// How often the listener's drain reached it.
        var drains = 0
        func drain() { drains += 1 }

        /// Answers `status` with `body` (its length announced), as a proxied response is written.
        func answer(_ status: HTTPResponseStatus = .ok, body: String, end: Bool = true) {
            client.writeResponseHead(ProxyResponseHead(status: status, fields: .gateway(["Content-Length": String(body.utf8.count)])))
            client.writeResponseBody(ByteBuffer(string: body))
            guard end else {
                client.flushResponse()
                return
            }
            client.endResponse(trailers: nil, closingAfter: false)
            client.exchangeAnswered()
        }
    }

    struct Connection {
        let channel = EmbeddedChannel()
        let source = ScriptedSource()
        let recorder = ConnectionTimeoutTests.HalfCloseRecorder()

        init(maxHeaderBytes: Int = 8192) async throws {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(recorder)
            try pipeline.addHandler(HTTPResponseEncoder(configuration: .init()))
            try pipeline.addHandler(HTTP1ConnectionHandler(
                headerReadTimeout: .seconds(30), idleTimeout: nil, bodyReadTimeout: HTTP1ConnectionHandlerTests.bodyTimeout, maxHeadBytes: maxHeaderBytes,
                proxy: source
            ))
            try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        }

        func send(_ text: String) throws {
            try channel.writeInbound(ByteBuffer(string: text))
        }

        /// The targets of the requests that went on to "Hummingbird" since last asked.
        func passedOn() throws -> [String] {
            var targets: [String] = []
            while let part = try channel.readInbound(as: HTTPServerRequestPart.self) {
                if case .head(let head) = part { targets.append(head.uri) }
            }
            return targets
        }

        /// Answers as Hummingbird does: `body` with its length, as parts through the encoder.
        func endpointAnswers(_ body: String) throws {
            try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: ["content-length": String(body.utf8.count)])))
            try channel.writeOutbound(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: body))))
            try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        }

        /// The bytes written to the client since last asked.
        func written() throws -> String {
            var text = ""
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
            return text
        }
    }

    private static func request(_ method: String, _ target: String, _ fields: String = "") -> String {
        "\(method) \(target) HTTP/1.1\r\nHost: h\r\n\(fields)\r\n"
    }

    @Test func pipelinedProxiedAndEndpointRequestsAreAnsweredInOrderAndHEADAnswersHaveNoBody() async throws {
        let connection = try await Connection()
        try connection.send(
            Self.request("GET", "/proxied/1") + Self.request("GET", "/healthz") + Self.request("HEAD", "/proxied/2")
                + Self.request("HEAD", "/healthz") + Self.request("POST", "/proxied/3", "Content-Length: 2\r\nConnection: close\r\n") + "hi"
                + Self.request("GET", "/healthz/after")
        )
        // One request at a time: only the first is under way.
        #expect(connection.source.exchanges.map(\.head.target) == ["/proxied/1"])
        #expect(try connection.passedOn().isEmpty)

        connection.source.exchanges[0].answer(body: "a")
        #expect(try connection.passedOn() == ["/healthz"])
        #expect(connection.source.exchanges.count == 1, "the next proxied request overtook the endpoint's")
        try connection.endpointAnswers("ok")

        #expect(connection.source.exchanges.map(\.head.target) == ["/proxied/1", "/proxied/2"])
        connection.source.exchanges[1].answer(body: "zz")
        #expect(try connection.passedOn() == ["/healthz"])
        try connection.endpointAnswers("ok")

        let last = try #require(connection.source.exchanges.last)
        #expect(last.head.target == "/proxied/3")
        #expect(last.body == "hi" && last.requestEnded)
        #expect(!connection.recorder.outputClosed)
        last.answer(.created, body: "c")

        #expect(try connection.written() == """
            HTTP/1.1 200 OK\r
            Content-Length: 1\r
            \r
            aHTTP/1.1 200 OK\r
            content-length: 2\r
            \r
            okHTTP/1.1 200 OK\r
            Content-Length: 2\r
            \r
            HTTP/1.1 200 OK\r
            content-length: 2\r
            \r
            HTTP/1.1 201 Created\r
            Content-Length: 1\r
            \r
            c
            """)
        // Connection: close: the output closes after its response, and the request behind it is
        // never taken; the connection lingers, then closes.
        #expect(connection.recorder.outputClosed)
        #expect(try connection.passedOn().isEmpty)
        #expect(connection.source.exchanges.count == 3)
        connection.channel.embeddedEventLoop.advanceTime(by: LingerDeadline.silence)
        #expect(!connection.channel.isActive)
    }

    @Test func anHTTP10RequestClosesAfterItsResponseUnlessItAsksForKeepAlive() async throws {
        let plain = try await Connection()
        try plain.send("GET /proxied/a HTTP/1.0\r\n\r\n")
        plain.source.exchanges[0].answer(body: "a")
        #expect(plain.recorder.outputClosed, "an HTTP/1.0 connection stayed open")

        let keptAlive = try await Connection()
        try keptAlive.send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /proxied/b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try keptAlive.passedOn() == ["/healthz"])
        try keptAlive.endpointAnswers("ok")
        #expect(!keptAlive.recorder.outputClosed)
        #expect(keptAlive.source.exchanges.map(\.head.target) == ["/proxied/b"])
    }

    @Test func aStalledProxiedBodyIs408BeforeItsResponseStarted() async throws {
        let connection = try await Connection()
        try connection.send(Self.request("POST", "/proxied/upload", "Content-Length: 10\r\n") + "abc")
        connection.channel.read()
        connection.channel.embeddedEventLoop.advanceTime(by: Self.bodyTimeout - .milliseconds(1))
        #expect(try connection.written().isEmpty)
        connection.channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        let text = try connection.written()
        #expect(text.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), "\(text)")
        #expect(text.contains("REQUEST_TIMEOUT"))
        #expect(!connection.channel.isActive)
        #expect(connection.source.exchanges.first?.closedCount == 1)
    }

    @Test func aStalledProxiedBodyAfterItsResponseStartedClosesWithout408() async throws {
        let connection = try await Connection()
        try connection.send(Self.request("POST", "/proxied/upload", "Content-Length: 10\r\n") + "abc")
        connection.source.exchanges[0].answer(body: "early", end: false)
        connection.channel.read()
        connection.channel.embeddedEventLoop.advanceTime(by: Self.bodyTimeout)
        #expect(try connection.written() == "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nearly")
        #expect(!connection.channel.isActive)
    }

    @Test func aHeadOverTheParsersLimitIs431AfterTheResponseBeforeIt() async throws {
        let connection = try await Connection(maxHeaderBytes: 256)
        try connection.send(Self.request("GET", "/proxied/1") + Self.request("GET", "/proxied/2", "X-Big: \(String(repeating: "b", count: 400))\r\n"))
        #expect(try connection.written().isEmpty, "the 431 overtook the answer before it")
        connection.source.exchanges[0].answer(body: "a")
        let text = try connection.written()
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 431 Request Header Fields Too Large\r\n"), "\(text)")
        #expect(text.contains("HEADERS_TOO_LARGE"))
        #expect(connection.recorder.outputClosed)
        #expect(connection.source.exchanges.count == 1)
    }

    @Test func aRefusedHeadIs400AndNeverReachesEitherOwner() async throws {
        let connection = try await Connection()
        try connection.send(Self.request("GET", "/proxied/1", "Authorization: Bearer a\r\nAuthorization: Bearer b\r\n"))
        #expect(connection.source.exchanges.isEmpty)
        #expect(try connection.passedOn().isEmpty)
        let text = try connection.written()
        #expect(text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(text)")
        #expect(text.contains("INVALID_REQUEST"))
        #expect(connection.recorder.outputClosed)
    }

    /// The listener drains: the next answer (proxied or the endpoints') says `Connection:
    /// close` and the connection then closes lingering; the exchange under way is told (an
    /// event stream ends), and so is one started while draining.
    @Test func aDrainAnswersTheNextRequestWithCloseThenLingers() async throws {
        let connection = try await Connection()
        try connection.send(Self.request("GET", "/proxied/1"))
        let first = try #require(connection.source.exchanges.first)
        connection.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(first.drains == 1)
        #expect(!connection.recorder.outputClosed, "closed with a response outstanding")
        first.answer(body: "a")
        #expect(try connection.written().contains("connection: close\r\n"))
        #expect(connection.recorder.outputClosed)

        let endpoint = try await Connection()
        endpoint.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        try endpoint.send(Self.request("GET", "/healthz"))
        #expect(try endpoint.passedOn() == ["/healthz"])
        try endpoint.endpointAnswers("ok")
        #expect(try endpoint.written().contains("Connection: close\r\n"))
        #expect(endpoint.recorder.outputClosed)

        let proxied = try await Connection()
        proxied.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        try proxied.send(Self.request("GET", "/proxied/2"))
        let exchange = try #require(proxied.source.exchanges.first)
        #expect(exchange.drains == 1, "an exchange started while draining is told")
    }

    @Test func anIdleConnectionClosesLingeringOnceTheDrainsGraceIsOver() async throws {
        let connection = try await Connection()
        connection.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        connection.channel.embeddedEventLoop.advanceTime(by: HTTP1ConnectionHandler.StateMachine.drainIdleGrace - .milliseconds(1))
        #expect(!connection.recorder.outputClosed)
        connection.channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(connection.recorder.outputClosed, "stop sending first: a request arriving now meets no reset")
        #expect(connection.channel.isActive)
    }
}
