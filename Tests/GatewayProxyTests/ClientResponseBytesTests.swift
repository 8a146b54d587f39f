import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1
@testable import GatewayEdge
@testable import GatewayProxy
import Testing

/// The bytes an HTTP/1.1 client is sent for a proxied response, in memory: the head
/// (``ClientResponseHead``: the header rules, the gateway's fields, the framing field), the body in
/// its framing (``ClientResponseFraming``), compared byte for byte; and such a response written
/// through ``HTTP1ConnectionHandler`` as an exchange writes it (``ProxyDownstream``), its bytes
/// below NIO's encoder, the connection's rules applied to its head and end.
@Suite("Proxy: the bytes a client is sent for a proxied answer (in memory)")
struct ClientResponseBytesTests {
    private static let allocator = ByteBufferAllocator()

    private static func upstream(_ status: HTTPResponseStatus, _ fields: [(String, String)], limits: HTTPFields = [:]) -> ProxyResponseHead {
        ProxyResponseHead(status: status, fields: .upstream(UpstreamResponseHead(status: status, fields: fields.map { (name: $0.0, value: $0.1) }), requestID: "req-1", adding: limits))
    }

    private static func encode(_ head: ProxyResponseHead, method: HTTPMethod = .GET) -> (text: String, framing: ClientResponseFraming) {
        var bytes = allocator.buffer(capacity: 64)
        let framing = ClientResponseHead.write(head, requestMethod: method, into: &bytes)
        return (String(buffer: bytes), framing)
    }

    /// What `framing` writes for `chunks` and the end with `trailers`.
    private static func body(_ chunks: [String], framing: ClientResponseFraming, trailers: HTTPHeaders? = nil) -> String {
        var text = ""
        for chunk in chunks {
            framing.frame(ByteBuffer(string: chunk), allocator: allocator) { text += String(buffer: $0) }
        }
        if let end = framing.end(trailers: trailers, allocator: allocator) { text += String(buffer: end) }
        return text
    }

    // MARK: Heads and bodies

    @Test func aLengthDelimitedResponseKeepsItsFieldsWithoutHopByHopOnesAndGetsTheGatewaysFields() {
        var limits = HTTPFields()
        limits[HTTPField.Name("RateLimit-Limit")!] = "100"
        limits[HTTPField.Name("RateLimit-Remaining")!] = "99"
        let head = Self.upstream(.ok, [
            ("Content-Type", "application/json"), ("Connection", "keep-alive, X-Hop"), ("X-Hop", "1"), ("Keep-Alive", "timeout=5"),
            ("Transfer-Encoding", "chunked"), ("X-Request-Id", "upstream-id"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"),
            ("Content-Length", "11"),
        ], limits: limits)
        let (text, framing) = Self.encode(head)
        #expect(text == """
            HTTP/1.1 200 OK\r
            Content-Type: application/json\r
            Set-Cookie: a=1\r
            Set-Cookie: b=2\r
            Content-Length: 11\r
            X-Request-Id: req-1\r
            RateLimit-Limit: 100\r
            RateLimit-Remaining: 99\r
            \r

            """)
        #expect(framing == .asIs)
        #expect(Self.body(["hello ", "world"], framing: framing) == "hello world")
    }

    @Test func aResponseWithoutALengthIsChunkedWithItsTrailers() {
        let (text, framing) = Self.encode(Self.upstream(.created, [("Content-Type", "text/plain")]))
        #expect(text == "HTTP/1.1 201 Created\r\nContent-Type: text/plain\r\nX-Request-Id: req-1\r\ntransfer-encoding: chunked\r\n\r\n")
        #expect(framing == .chunked)
        #expect(Self.body(["hello", "", "0123456789abcdefg"], framing: framing) == "5\r\nhello\r\n11\r\n0123456789abcdefg\r\n0\r\n\r\n")
        #expect(Self.body(["hi"], framing: framing, trailers: ["X-Checksum": "abc", "X-Count": "2"])
            == "2\r\nhi\r\n0\r\nX-Checksum: abc\r\nX-Count: 2\r\n\r\n")
        #expect(Self.body([], framing: framing, trailers: [:]) == "0\r\n\r\n")
    }

    @Test func theResponseToAHEADKeepsItsFramingFieldsButHasNoBody() {
        let (withLength, lengthFraming) = Self.encode(Self.upstream(.ok, [("Content-Length", "42")]), method: .HEAD)
        #expect(withLength == "HTTP/1.1 200 OK\r\nContent-Length: 42\r\nX-Request-Id: req-1\r\n\r\n")
        #expect(lengthFraming == .bodiless)
        #expect(Self.body(["not sent"], framing: lengthFraming, trailers: ["X-T": "1"]) == "")

        let (withoutLength, framing) = Self.encode(Self.upstream(.ok, []), method: .HEAD)
        #expect(withoutLength == "HTTP/1.1 200 OK\r\nX-Request-Id: req-1\r\ntransfer-encoding: chunked\r\n\r\n")
        #expect(framing == .bodiless)
        #expect(Self.body([], framing: framing) == "", "an answer to HEAD got a last chunk")
    }

    @Test func answersWhoseStatusHasNoBodyDropTheirLengthAndBody() {
        for status in [HTTPResponseStatus.noContent, .notModified] {
            let (text, framing) = Self.encode(Self.upstream(status, [("ETag", "\"v1\""), ("Content-Length", "7")]))
            #expect(text == "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\nETag: \"v1\"\r\nX-Request-Id: req-1\r\n\r\n")
            #expect(framing == .bodiless)
            #expect(Self.body(["ignored"], framing: framing) == "")
        }
    }

    @Test func theGatewaysOwnResponseGoesAsMadeWithItsStatusLine() {
        let (head, body) = GatewayError.upstreamUnavailable.channelParts(requestID: "req-9")
        let (text, framing) = Self.encode(ProxyResponseHead(status: head.status, fields: .gateway(head.headers)))
        var expected = "HTTP/1.1 502 Bad Gateway\r\n"
        for (name, value) in head.headers { expected += "\(name): \(value)\r\n" }
        #expect(text == expected + "\r\n")
        #expect(text.contains("X-Request-Id: req-9\r\n") || text.contains("x-request-id: req-9\r\n"))
        #expect(framing == .asIs)
        #expect(Self.body([String(buffer: body)], framing: framing) == String(buffer: body))
    }

    /// HTTP/2 builds its header block from the same rule: the fields match those the bytes carry.
    @Test func theHTTP2FieldsComeFromTheSameRule() {
        let head = Self.upstream(.ok, [("Connection", "close"), ("X-Request-Id", "theirs"), ("X-Kept", "1")])
        let block = head.headerBlock()
        #expect(block.map { "\($0.name): \($0.value)" } == [":status: 200", "x-kept: 1", "x-request-id: req-1"])
    }

    // MARK: HTTP1ConnectionHandler and a proxied response

    /// A public connection's codec and ``HTTP1ConnectionHandler``, as ``GatewayHTTP1Channel``
    /// sets them up, over a recorder of half-closures.
    private static func clientChannel(recorder: ConnectionTimeoutTests.HalfCloseRecorder) async throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(recorder)
        try pipeline.addHandler(HTTPResponseEncoder(configuration: .init()))
        try pipeline.addHandler(HTTP1ConnectionHandler(headerReadTimeout: .seconds(1), idleTimeout: nil, bodyReadTimeout: .seconds(10), maxHeadBytes: 8192, proxy: nil))
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        return channel
    }

    /// Writes a proxied response the way an exchange does (``ProxyDownstream``); the request
    /// went on to the channel's inbound side, as the handler has no engine here.
    private static func answer(_ channel: EmbeddedChannel, body: String = "proxied", beforeEnd: () throws -> Void = {}) throws {
        let handler = try channel.pipeline.syncOperations.handler(type: HTTP1ConnectionHandler.self)
        handler.writeResponseHead(upstream(.ok, [("Content-Length", String(body.utf8.count))]))
        handler.writeResponseBody(ByteBuffer(string: body))
        try beforeEnd()
        handler.endResponse(trailers: nil, closingAfter: false)
        handler.exchangeAnswered()
    }

    private static func written(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return text
    }

    @Test func aProxiedResponseToAClosingRequestEndsInALingeringClose() async throws {
        let recorder = ConnectionTimeoutTests.HalfCloseRecorder()
        let channel = try await Self.clientChannel(recorder: recorder)
        try channel.writeInbound(ByteBuffer(string: "GET /x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"))
        while try channel.readInbound(as: HTTPServerRequestPart.self) != nil {}
        try Self.answer(channel)
        #expect(try Self.written(channel) == "HTTP/1.1 200 OK\r\nContent-Length: 7\r\nX-Request-Id: req-1\r\n\r\nproxied")
        #expect(recorder.outputClosed, "the output was not closed after the proxied answer's end")
        channel.embeddedEventLoop.advanceTime(by: LingerDeadline.silence)
        #expect(!channel.isActive)
    }

    @Test func aKeptAliveConnectionTimesTheNextHeadFromTheProxiedAnswersEnd() async throws {
        let recorder = ConnectionTimeoutTests.HalfCloseRecorder()
        let channel = try await Self.clientChannel(recorder: recorder)
        try channel.writeInbound(ByteBuffer(string: "GET /x HTTP/1.1\r\nHost: h\r\n\r\n"))
        while try channel.readInbound(as: HTTPServerRequestPart.self) != nil {}
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        // The client had the response's bytes and starts its next request before the end has
        // been told: that head is timed from the end.
        try Self.answer(channel) { try channel.writeInbound(ByteBuffer(string: "GET /y HTTP/1.1\r\nX-Partial: ")) }
        _ = try Self.written(channel)
        #expect(!recorder.outputClosed)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(999))
        #expect(channel.isActive, "closed before the head read timeout after the answer")
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive, "the next head was not timed from the proxied answer's end")
    }

    @Test func aRefusedHeadPipelinedBehindAProxiedResponseIsAnsweredAfterIt() async throws {
        let recorder = ConnectionTimeoutTests.HalfCloseRecorder()
        let channel = try await Self.clientChannel(recorder: recorder)
        try channel.writeInbound(ByteBuffer(string:
            "GET /x HTTP/1.1\r\nHost: h\r\n\r\nGET /y HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n"))
        while try channel.readInbound(as: HTTPServerRequestPart.self) != nil {}
        try Self.answer(channel)
        let text = try Self.written(channel)
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\nContent-Length: 7\r\nX-Request-Id: req-1\r\n\r\nproxied"))
        #expect(text.dropFirst(60).contains("HTTP/1.1 400 Bad Request\r\n"), "the refusal did not follow the proxied answer: \(text)")
        #expect(recorder.outputClosed)
    }

    /// The encoder is not paired with the decoder (proxied responses pass it by), so the body of
    /// a response to `HEAD` through it is dropped by ``HTTP1ConnectionHandler``, in turn with the
    /// proxied responses before it; a proxied response to `HEAD` is written without its body.
    @Test func theBodyOfAnEndpointsResponseToHEADIsDroppedAfterAProxiedResponse() async throws {
        let recorder = ConnectionTimeoutTests.HalfCloseRecorder()
        let channel = try await Self.clientChannel(recorder: recorder)
        try channel.writeInbound(ByteBuffer(string: "HEAD /x HTTP/1.1\r\nHost: h\r\n\r\nHEAD /healthz HTTP/1.1\r\nHost: h\r\n\r\nGET /healthz HTTP/1.1\r\nHost: h\r\n\r\n"))
        while try channel.readInbound(as: HTTPServerRequestPart.self) != nil {}
        try Self.answer(channel)
        #expect(try Self.written(channel) == "HTTP/1.1 200 OK\r\nContent-Length: 7\r\nX-Request-Id: req-1\r\n\r\n")
        for _ in 0..<2 {
            try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: ["content-length": "2"])))
            try channel.writeOutbound(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: "ok"))))
            try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        }
        #expect(try Self.written(channel) == "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
    }
}
