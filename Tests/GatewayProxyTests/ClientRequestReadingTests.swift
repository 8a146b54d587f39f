import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import GatewayProxy

/// ``HTTP1ConnectionHandler`` parsing its client's bytes itself, in memory: parts whole
/// however the reads split them, only a part not yet whole held between reads, nothing
/// parsed after a parser error, and a request cut short by the client's half-close answered.
@Suite("HTTP/1 connection handler reading its client's bytes (in memory)")
struct ClientRequestReadingTests {
    private typealias Connection = HTTP1ConnectionHandlerTests.Connection

    private static func handler(_ connection: Connection) throws -> HTTP1ConnectionHandler {
        try connection.channel.pipeline.syncOperations.handler(type: HTTP1ConnectionHandler.self)
    }

    @Test func aRequestReadAByteAtATimeReachesItsExchangeWhole() async throws {
        let connection = try await Connection()
        let request = "POST /proxied/upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5\r\nhello\r\n6\r\n world\r\n0\r\nX-Checksum: 1\r\n\r\n"
        for byte in request.utf8 {
            try connection.channel.writeInbound(ByteBuffer(bytes: [byte]))
        }
        let exchange = try #require(connection.source.exchanges.first)
        #expect(connection.source.exchanges.count == 1)
        #expect(exchange.head.target == "/proxied/upload")
        #expect(exchange.body == "hello world")
        #expect(exchange.requestEnded)
        #expect(try Self.handler(connection).unread.held == nil, "bytes held after a whole request")
        // The next request, an endpoint's, split across two reads, goes on once the first is answered.
        try connection.send("GET /healthz HT")
        try connection.send("TP/1.1\r\nHost: h\r\n\r\n")
        #expect(try connection.passedOn().isEmpty)
        exchange.answer(body: "ok")
        #expect(try connection.passedOn() == ["/healthz"])
    }

    @Test func aLongUploadWhoseReadsEndMidPartHoldsOnlyItsRemainder() async throws {
        let connection = try await Connection()
        try connection.send("POST /proxied/stream HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nc8")
        // Each read ends inside the next chunk's size line, so a remainder is held every time.
        let chunk = String(repeating: "u", count: 200)
        for _ in 0..<2_000 {
            try connection.send("\r\n\(chunk)\r\nc8")
        }
        #expect(connection.source.exchanges.first?.body.utf8.count == 2_000 * 200)
        let held = try #require(try Self.handler(connection).unread.held)
        #expect(held.readableBytes == 2)
        #expect(held.capacity < 64 * 1024, "the held remainder grew with the upload: \(held.capacity) bytes")
    }

    @Test func nothingIsParsedAfterAParserError() async throws {
        let connection = try await Connection()
        // A proxied request under way, then white space before a colon: the error waits for the
        // answer before it, and the requests behind it, in the same read and the next, are not read.
        try connection.send("GET /proxied/a HTTP/1.1\r\nHost: h\r\n\r\n")
        try connection.send("GET /healthz HTTP/1.1\r\nHost : h\r\n\r\nGET /proxied/b HTTP/1.1\r\nHost: h\r\n\r\n")
        try connection.send("GET /proxied/c HTTP/1.1\r\nHost: h\r\n\r\n")
        let exchange = try #require(connection.source.exchanges.first)
        exchange.answer(body: "ok")
        #expect(connection.source.exchanges.map(\.head.target) == ["/proxied/a"])
        #expect(try connection.passedOn().isEmpty)
        #expect(try connection.written().hasPrefix("HTTP/1.1 200 OK"))
    }

    @Test func aHalfCloseInsideAHeadIsAnswered400() async throws {
        let connection = try await Connection()
        try connection.send("GET /healthz HTTP/1.1\r\nHo")
        #expect(try Self.handler(connection).unread.held != nil)
        connection.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(try connection.written().hasPrefix("HTTP/1.1 400 Bad Request"))
        #expect(try connection.passedOn().isEmpty)
    }

    @Test func aHalfCloseBetweenRequestsAnswersWhatWasSent() async throws {
        let connection = try await Connection()
        try connection.send("GET /healthz HTTP/1.1\r\nHost: h\r\n\r\n")
        connection.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(try connection.passedOn() == ["/healthz"])
        try connection.endpointAnswers("ok")
        #expect(try connection.written().hasPrefix("HTTP/1.1 200 OK"))
    }
}
