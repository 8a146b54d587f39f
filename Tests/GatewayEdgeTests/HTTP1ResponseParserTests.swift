import NIOCore
import NIOHTTP1
@testable import GatewayEdge
import Testing

/// The gateway's HTTP/1 response parser (``HTTP1ResponseParser``), in memory: every framing of
/// RFC 9112 §6.3, what it refuses, interim responses, the protocol switch, and that how the
/// bytes arrive changes nothing.
@Suite("HTTP/1 response parser (in memory)")
struct HTTP1ResponseParserTests {
    /// A part as compared here: a head as text (status, version, framing, keep-alive, fields),
    /// body bytes joined per response, the end with its trailers.
    enum Part: Equatable {
        case head(String)
        case body(String)
        case end(String?)
    }

    struct Result {
        var parts: [Part] = []
        var error: (any Error)?
        /// What the buffer held unread at the end (after a `101`).
        var unread = ""

        var parserError: HTTPParserError? { error as? HTTPParserError }
    }

    /// The parts of `input`, fed whole or in pieces of `piece` bytes, each response expected in
    /// answer to the next of `methods` (the last one repeated), and the error that ended it.
    static func parse(
        _ input: String, methods: [HTTPMethod] = [.GET], piece: Int? = nil, maxHeadBytes: Int = 1024, eof: Bool = false, expecting: Bool = true
    ) -> Result {
        var parser = HTTP1ResponseParser(maxHeadBytes: maxHeadBytes)
        var responses = 0
        func expectNext() {
            parser.expectResponse(to: methods[min(responses, methods.count - 1)])
        }
        if expecting { expectNext() }
        var result = Result()
        var buffer = ByteBuffer()
        let bytes = Array(input.utf8)
        let size = piece ?? max(bytes.count, 1)
        func add(_ part: UpstreamResponsePart) {
            switch part {
            case .head(let head):
                result.parts.append(.head(describe(head)))
            case .body(var chunk):
                let text = chunk.readString(length: chunk.readableBytes)!
                if case .body(let earlier) = result.parts.last { result.parts[result.parts.count - 1] = .body(earlier + text) } else { result.parts.append(.body(text)) }
            case .end(let trailers):
                result.parts.append(.end(trailers.map { $0.map { "\($0.name)=\($0.value)" }.joined(separator: ";") }))
                responses += 1
                expectNext()
            }
        }
        do {
            for start in stride(from: 0, to: bytes.count, by: size) {
                buffer.writeBytes(bytes[start..<min(start + size, bytes.count)])
                while let part = try parser.next(&buffer) { add(part) }
            }
            if eof, let end = try parser.inputEnded(unread: buffer) { add(end) }
        } catch {
            result.error = error
        }
        result.unread = buffer.readString(length: buffer.readableBytes) ?? ""
        return result
    }

    static func describe(_ head: UpstreamResponseHead) -> String {
        let fields = head.headers.map { "\($0.name)=\($0.value)" }.joined(separator: ";")
        return "\(head.status.code) \(head.version) \(head.framing) \(head.isKeepAlive ? "keep" : "close") \(fields)"
    }

    @Test(arguments: [nil, 1, 3, 7])
    func responsesFrameTheSameHoweverTheBytesArrive(piece: Int?) {
        let input = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Empty:\r\nX-Pad: \t v w \t\r\nContent-Length: 5\r\n\r\nhello"
            + "\r\nHTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "3;ext=\"a b\"\r\nabc\r\n0A\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n"
            + "HTTP/1.1 204 No Content\r\nContent-Length: 9\r\n\r\n"
            + "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"
            + "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok"
            + "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n"
            + "HTTP/1.1 500 \r\n\r\nuntil the end"
        let result = Self.parse(input, methods: [.GET, .POST, .DELETE, .GET, .HEAD, .GET], piece: piece, eof: true)
        #expect(result.error == nil)
        #expect(result.parts == [
            .head("200 HTTP/1.1 length(5) keep Content-Type=text/plain;X-Empty=;X-Pad=v w;Content-Length=5"), .body("hello"), .end(nil),
            .head("201 HTTP/1.1 chunked keep Transfer-Encoding=chunked"), .body("abc0123456789"), .end("X-Trailer=t"),
            .head("204 HTTP/1.1 bodiless keep Content-Length=9"), .end(nil),
            .head("304 HTTP/1.1 bodiless keep Transfer-Encoding=chunked"), .end(nil),
            .head("200 HTTP/1.1 bodiless keep Content-Length=10"), .end(nil),
            .head("200 HTTP/1.0 length(2) keep Connection=keep-alive;Content-Length=2"), .body("ok"), .end(nil),
            .head("200 HTTP/1.1 length(0) keep Content-Length=0"), .end(nil),
            .head("500 HTTP/1.1 untilClose close "), .body("until the end"), .end(nil),
        ])
    }

    /// A field line goes to an HTTP/1.1 client as the bytes it was: the name, the value without
    /// the white space around it, and the whole line.
    @Test func fieldsAreTheHeadsBytes() throws {
        var parser = HTTP1ResponseParser()
        parser.expectResponse(to: .GET)
        var buffer = ByteBuffer(string: "HTTP/1.1 200 OK\r\nX-A:b\r\nX-Pad:  v w \t\r\nContent-Length: 0\r\n\r\n")
        guard case .head(let head) = try parser.next(&buffer) else {
            Issue.record("no head")
            return
        }
        #expect(head.bytes.readableBytes == 60)
        #expect(head.count == 3)
        var fields: [[String]] = []
        head.forEachField { fields.append([String(decoding: $0.name, as: UTF8.self), String(decoding: $0.value, as: UTF8.self), String(decoding: $0.line, as: UTF8.self)]) }
        #expect(fields == [
            ["X-A", "b", "X-A:b\r\n"], ["X-Pad", "v w", "X-Pad:  v w \t\r\n"], ["Content-Length", "0", "Content-Length: 0\r\n"],
        ])
        #expect(try parser.next(&buffer) == .end(nil))
    }

    /// Interim responses are read and dropped, as NIO's decoder did: the final response is the
    /// one handed on, and a `HEAD`'s answer after them is still bodiless.
    @Test(arguments: [nil, 1])
    func interimResponsesAreDropped(piece: Int?) {
        let input = "HTTP/1.1 100 Continue\r\n\r\n"
            + "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
            + "HTTP/1.1 102 Processing\r\nContent-Length: 4\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
            + "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n"
        let result = Self.parse(input, methods: [.POST, .HEAD], piece: piece)
        #expect(result.error == nil)
        #expect(result.parts == [
            .head("200 HTTP/1.1 length(2) keep Content-Length=2"), .body("ok"), .end(nil),
            .head("200 HTTP/1.1 bodiless keep Content-Length=3"), .end(nil),
        ])
        // An interim response that closes the connection leaves no room for the final one.
        let closing = Self.parse("HTTP/1.1 100 Continue\r\nConnection: close\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", piece: piece)
        #expect(closing.parserError == .closedConnection)
        #expect(closing.parts.isEmpty)
    }

    /// After a `101` nothing is read as HTTP: the bytes stay for the tunnel.
    @Test(arguments: [nil, 1])
    func nothingAfterASwitchIsRead(piece: Int?) {
        let result = Self.parse(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\u{81}\u{02}hiHTTP/1.1 200 OK\r\n\r\n",
            piece: piece, eof: true
        )
        #expect(result.error == nil)
        #expect(result.parts == [.head("101 HTTP/1.1 switched close Upgrade=websocket;Connection=Upgrade")])
        #expect(result.unread == "\u{81}\u{02}hiHTTP/1.1 200 OK\r\n\r\n")
    }

    /// `Connection: close`, HTTP/1.0 without `keep-alive` and a body until the close end the
    /// connection: bytes after such a response are refused (empty lines aside), as llhttp does.
    @Test func aResponseThatClosesTheConnectionIsItsLast() {
        let close = Self.parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx\r\n\r\n")
        #expect(close.error == nil)
        #expect(close.parts == [.head("200 HTTP/1.1 length(1) close Connection=close;Content-Length=1"), .body("x"), .end(nil)])
        let after = Self.parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\n\r\n")
        #expect(after.parserError == .closedConnection)
        #expect(after.parts.count == 2)
        let http10 = Self.parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.0 200 OK\r\n\r\n")
        #expect(http10.parserError == .closedConnection)
        #expect(http10.parts == [.head("200 HTTP/1.0 length(0) close Content-Length=0"), .end(nil)])
        let untilClose = Self.parse("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\nall of it", eof: true)
        #expect(untilClose.parts == [.head("200 HTTP/1.0 untilClose close Connection=keep-alive"), .body("all of it"), .end(nil)])
        // A bodiless answer to HEAD keeps the connection whatever framing it names.
        let head = Self.parse("HTTP/1.1 200 OK\r\n\r\n", methods: [.HEAD])
        #expect(head.parts == [.head("200 HTTP/1.1 bodiless keep "), .end(nil)])
    }

    /// Each is refused, with the response before it framed: the ambiguities response splitting
    /// and smuggling rely on, and what is not an HTTP/1.1 response.
    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nX-A: a\r\n folded\r\n\r\n",                                 // obs-fold
        "HTTP/1.1 200 OK\r\nX-A : a\r\n\r\n",                                           // space before the colon
        "HTTP/1.1 200 OK\r\nX-A: a\nX-B: b\r\n\r\n",                                    // bare LF
        "HTTP/1.1 200 OK\r\nX-A: a\rX-B: b\r\n\r\n",                                    // bare CR
        "HTTP/1.1 200 OK\r\nX-A: a\0b\r\n\r\n",                                         // a control byte
        "HTTP/1.1 200 OK\r\n: a\r\n\r\n",                                               // no name
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\na",           // two lengths
        "HTTP/1.1 200 OK\r\nContent-Length: 1, 1\r\n\r\na",                             // a list
        "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\na",
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "HTTP/1.1 204 No Content\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",  // even without a body
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",                           // not ending in chunked
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",               // chunked in HTTP/1.0
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nabcde\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nabcde\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcdeX\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a\nb\r\nabcde\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T : t\r\n\r\n",   // a bad trailer
        "HTTP/1.1 20 OK\r\n\r\n",                                                       // status of two digits
        "HTTP/1.1 2000 OK\r\n\r\n",
        "HTTP/1.1 600 Six\r\n\r\n",
        "HTTP/1.1 099 Low\r\n\r\n",
        "HTTP/1.1 2x0 OK\r\n\r\n",
        "HTTP/1.1 200OK\r\n\r\n",
        "HTTP/1.1 200 O\u{7F}K\r\n\r\n",                                                // a control byte in the reason
        "HTTP/1.1  200 OK\r\n\r\n",
        "HTTP/1.2 200 OK\r\n\r\n",
        "HTTP/2.0 200 OK\r\n\r\n",
        "HTTP/1.1\r\n\r\n",
        "http/1.1 200 OK\r\n\r\n",
        "ICY 200 OK\r\n\r\n",
        "HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n",
    ])
    func malformedResponsesAreRefused(response: String) {
        let result = Self.parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n" + response)
        #expect(result.error != nil, "accepted: \(result.parts)")
        #expect(result.parts.prefix(2) == [.head("200 HTTP/1.1 length(0) keep Content-Length=0"), .end(nil)])
    }

    /// Bytes when no response is owed are the upstream out of step; empty lines are not.
    @Test(arguments: [nil, 1])
    func bytesNobodyAskedForAreRefused(piece: Int?) {
        let idle = Self.parse("\r\n\r\n\r", piece: piece, expecting: false)
        #expect(idle.error == nil)
        let unsolicited = Self.parse("\r\nHTTP/1.1 200 OK\r\n\r\n", piece: piece, expecting: false)
        #expect(unsolicited.error is NIOHTTPDecoderError)
        #expect(unsolicited.parts.isEmpty)
    }

    @Test(arguments: [nil, 1])
    func aHeadOverTheLimitIsAHeaderOverflowWhetherOrNotItIsComplete(piece: Int?) {
        let big = "HTTP/1.1 200 OK\r\nX-Big: \(String(repeating: "b", count: 200))\r\n"
        #expect(Self.parse(big + "\r\n", piece: piece, maxHeadBytes: 100).parserError == .headerOverflow)
        #expect(Self.parse(big, piece: piece, maxHeadBytes: 100).parserError == .headerOverflow)
        #expect(Self.parse(big + "Content-Length: 0\r\n\r\n", piece: piece, maxHeadBytes: 300).error == nil)
        let trailers = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\(big.dropFirst(17))\r\n"
        #expect(Self.parse(trailers, piece: piece, maxHeadBytes: 100).parserError == .headerOverflow)
        // Interim responses count against it too, each on its own.
        let interim = String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 10) + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
        #expect(Self.parse(interim, piece: piece, maxHeadBytes: 60).error == nil)
        #expect(HTTP1ResponseParser.defaultMaxHeadBytes == 80 * 1024)
    }

    @Test func inputEndingInsideAResponseIsAnError() {
        #expect(Self.parse("HTTP/1.1 200 OK\r\nContent", eof: true).parserError == .invalidEOFState)
        #expect(Self.parse("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nab", eof: true).parserError == .invalidEOFState)
        #expect(Self.parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n", eof: true).parserError == .invalidEOFState)
        #expect(Self.parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", eof: true).error == nil)
        // A connection that closes before its response began is the handler's to name (closed).
        #expect(Self.parse("", eof: true).error == nil)
    }

    /// A head the gateway makes (a stored response replayed) reads as a parsed one does.
    @Test func aMadeHeadHasTheParsedFormsFields() throws {
        let made = UpstreamResponseHead(status: .created, fields: [(name: "Content-Type", value: "text/plain"), (name: "Content-Length", value: "2")])
        #expect(Self.describe(made) == "201 HTTP/1.1 length(2) keep Content-Type=text/plain;Content-Length=2")
        var lines: [String] = []
        made.forEachField { lines.append(String(decoding: $0.line, as: UTF8.self)) }
        #expect(lines == ["Content-Type: text/plain\r\n", "Content-Length: 2\r\n"])
        var parser = HTTP1ResponseParser()
        parser.expectResponse(to: .GET)
        var bytes = made.bytes
        guard case .head(let parsed) = try parser.next(&bytes) else {
            Issue.record("the made head does not parse")
            return
        }
        #expect(parsed.headers == made.headers)
    }
}
