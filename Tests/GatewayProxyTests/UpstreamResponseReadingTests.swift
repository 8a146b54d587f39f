import NIOCore
import NIOEmbedded
import NIOHTTP1
@testable import GatewayEdge
@testable import GatewayProxy
import Testing

/// How an upstream connection reads its response from the socket's bytes, in memory: the
/// parser runs inside ``UpstreamResponseHandler`` on each read, bytes that end mid-part wait
/// for the next, and bytes no response may hold end the connection.
@Suite("Proxy: an upstream's response read from its bytes (in memory)")
struct UpstreamResponseReadingTests {
    /// A GET sent on an embedded upstream connection, its response going to a recording sink.
    private static func sentGET() throws -> (EmbeddedChannel, UpstreamResponseHandler, ConnectionTimeoutTests.RecordingSink) {
        let sink = ConnectionTimeoutTests.RecordingSink()
        let (channel, handler) = try sentGET(to: sink)
        return (channel, handler, sink)
    }

    /// A GET sent on an embedded upstream connection, its response going to `sink`.
    private static func sentGET(to sink: any UpstreamResponseSink) throws -> (EmbeddedChannel, UpstreamResponseHandler) {
        let channel = EmbeddedChannel()
        try UpstreamResponseHandler.addHandlers(to: channel)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        let handler = try channel.pipeline.syncOperations.handler(type: UpstreamResponseHandler.self)
        var head = UpstreamRequestHead(method: .GET, target: "/", allocator: channel.allocator)
        head.end(framing: .bodiless)
        try handler.send(head, to: sink, timeout: .seconds(30))
        return (channel, handler)
    }

    private static func bodies(_ parts: [UpstreamResponsePart]) -> String {
        parts.reduce(into: "") { text, part in
            if case .body(let chunk) = part { text += String(buffer: chunk) }
        }
    }

    @Test func partsSplitAcrossReadsArriveWholeAndInOrder() throws {
        let (channel, handler, sink) = try Self.sentGET()
        for piece in ["HTTP/1.1 200 OK\r\nContent-Le", "ngth: 11\r\nX-A: b\r\n", "\r\nhello", " ", "world"] {
            try channel.writeInbound(ByteBuffer(string: piece))
        }
        guard case .head(let head) = sink.parts.first else {
            Issue.record("no head first: \(sink.parts)")
            return
        }
        #expect(head.status == .ok)
        #expect(Self.bodies(sink.parts) == "hello world")
        #expect(sink.parts.last == .end(nil))
        #expect(sink.failure == nil)
        #expect(handler.isReusable)
    }

    @Test func aChunkedBodyWhoseSizeLinesSplitAcrossReadsEndsWithItsTrailers() throws {
        let (channel, handler, sink) = try Self.sentGET()
        for piece in ["HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r", "\nhello\r\n0\r\nX-T", "railer: 1\r\n\r\n"] {
            try channel.writeInbound(ByteBuffer(string: piece))
        }
        #expect(Self.bodies(sink.parts) == "hello")
        #expect(sink.parts.last == .end(HTTPHeaders([("X-Trailer", "1")])))
        #expect(handler.isReusable)
    }

    @Test func bytesBehindTheResponseEndTheConnection() throws {
        let (channel, handler, sink) = try Self.sentGET()
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n\r\n"))
        #expect(sink.parts.last == .end(nil), "the response owed was not delivered")
        #expect(!handler.isReusable)
        #expect(!channel.isActive)
    }

    @Test func aMalformedHeadFailsTheExchangeAndClosesTheConnection() throws {
        let (channel, handler, sink) = try Self.sentGET()
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nBad Field: x\r\n\r\n"))
        #expect(sink.failure == .malformedResponse)
        #expect(sink.parts.isEmpty)
        #expect(!handler.isReusable)
        #expect(!channel.isActive)
    }

    @Test func aBodyReadUntilTheCloseEndsWhenTheUpstreamCloses() throws {
        let (channel, _, sink) = try Self.sentGET()
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it"))
        #expect(sink.parts.last != .end(nil))
        channel.pipeline.fireChannelInactive()
        #expect(Self.bodies(sink.parts) == "all of it")
        #expect(sink.parts.last == .end(nil))
        #expect(sink.failure == nil)
    }

    @Test func anUpstreamClosingMidBodyFailsTheExchange() throws {
        let (channel, _, sink) = try Self.sentGET()
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"))
        channel.pipeline.fireChannelInactive()
        #expect(sink.failure == .malformedResponse)
    }

    /// Counts what it is pushed and keeps none of it, as an exchange that has written it does.
    private final class CountingSink: UpstreamResponseSink {
        var bodyBytes = 0
        func upstreamPart(_ part: UpstreamResponsePart) -> Bool {
            if case .body(let chunk) = part { bodyBytes += chunk.readableBytes }
            return true
        }
        func upstreamReadComplete() {}
        func upstreamWritabilityChanged() {}
        func upstreamFailed(_ error: UpstreamError) {}
    }

    @Test func aLongStreamWhoseReadsEndMidPartHoldsOnlyItsRemainder() throws {
        let sink = CountingSink()
        let (channel, handler) = try Self.sentGET(to: sink)
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"))
        // Each read ends inside the next chunk's size line, so a remainder is held every time.
        let event = String(repeating: "e", count: 200)
        try channel.writeInbound(ByteBuffer(string: "c8"))
        for _ in 0..<2_000 {
            try channel.writeInbound(ByteBuffer(string: "\r\n\(event)\r\nc8"))
        }
        #expect(sink.bodyBytes == 2_000 * 200)
        let held = try #require(handler.unread.held)
        #expect(held.readableBytes == 2)
        #expect(held.capacity < 64 * 1024, "the held remainder grew with the stream: \(held.capacity) bytes")
    }
}
