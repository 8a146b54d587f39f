import NIOCore
import NIOHTTP1
@testable import GatewayEdge
import Testing

/// The gateway's HTTP/1.1 request parser (``HTTP1RequestParser``), in memory: what it frames,
/// what it refuses, and that how the bytes arrive changes neither.
@Suite("HTTP/1 request parser (in memory)")
struct HTTP1RequestParserTests {
    /// A part as compared here: heads and trailers as text, body bytes joined per request.
    enum Part: Equatable {
        case head(String)
        case body(String)
        case end(String?)
    }

    /// The parts of `input`, fed whole or in pieces of `piece` bytes, and the error that ended it.
    static func parse(_ input: String, piece: Int? = nil, maxHeadBytes: Int = 1024, eof: Bool = false) -> (parts: [Part], error: HTTPParserError?) {
        var parser = HTTP1RequestParser(maxHeadBytes: maxHeadBytes)
        var parts: [Part] = []
        var buffer = ByteBuffer()
        let bytes = Array(input.utf8)
        let size = piece ?? max(bytes.count, 1)
        do {
            for start in stride(from: 0, to: bytes.count, by: size) {
                buffer.writeBytes(bytes[start..<min(start + size, bytes.count)])
                while let part = try parser.next(&buffer) {
                    switch part {
                    case .head(let head):
                        let fields = head.headers.map { "\($0.name)=\($0.value)" }.joined(separator: ";")
                        parts.append(.head("\(head.method.rawValue) \(head.target) \(head.version) \(fields)"))
                    case .body(var chunk):
                        let text = chunk.readString(length: chunk.readableBytes)!
                        if case .body(let earlier) = parts.last { parts[parts.count - 1] = .body(earlier + text) } else { parts.append(.body(text)) }
                    case .end(let trailers):
                        parts.append(.end(trailers.map { $0.map { "\($0.name)=\($0.value)" }.joined(separator: ";") }))
                    }
                }
            }
            if eof { try parser.inputEnded(unread: buffer) }
        } catch {
            return (parts, error as? HTTPParserError)
        }
        return (parts, nil)
    }

    /// The first head `input` holds, as the parser keeps it.
    static func head(_ input: String) throws -> ClientRequestHead {
        var parser = HTTP1RequestParser(maxHeadBytes: 1024)
        var buffer = ByteBuffer(string: input)
        guard case .head(let head)? = try parser.next(&buffer) else { throw HTTPParserError.invalidEOFState }
        return head
    }

    @Test func aHeadKeepsItsBytesAndWhereEachFieldLies() throws {
        let text = "POST /a?b=1 HTTP/1.1\r\nHost: h\r\nx-MIXED:\t v w \t\r\nX-Empty:\r\nx-mixed: 2\r\nContent-Length: 3\r\n\r\n"
        let head = try Self.head(text + "abc")
        #expect(head.method == .POST && head.target == "/a?b=1" && head.version == .http1_1 && head.isKeepAlive)
        #expect(head.declaredBody == .length(3))
        #expect(String(buffer: head.bytes) == text, "the head is not its bytes")
        var lines: [String] = []
        head.forEachField { field in
            lines.append("\(String(decoding: field.name, as: UTF8.self))=\(field.valueString)|\(String(decoding: field.line, as: UTF8.self))")
        }
        #expect(lines == [
            "Host=h|Host: h\r\n", "x-MIXED=v w|x-MIXED:\t v w \t\r\n", "X-Empty=|X-Empty:\r\n", "x-mixed=2|x-mixed: 2\r\n",
            "Content-Length=3|Content-Length: 3\r\n",
        ])
        #expect(head.first("x-mixed") == "v w" && head.values("x-mixed") == ["v w", "2"] && head.first("x-none") == nil)
        #expect(head.contains("x-empty") && head.count == 5)
        #expect(head.requestHead == HTTPRequestHead(
            version: .http1_1, method: .POST, uri: "/a?b=1",
            headers: HTTPHeaders([("Host", "h"), ("x-MIXED", "v w"), ("X-Empty", ""), ("x-mixed", "2"), ("Content-Length", "3")])
        ))
        // Laid out again from NIO's form (an HTTP/2 stream's), it reads the same.
        let laidOut = ClientRequestHead(head.requestHead)
        #expect(laidOut.requestHead == head.requestHead && laidOut.values("x-mixed") == ["v w", "2"])
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\n\r\n", true), ("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n", false),
        ("GET / HTTP/1.0\r\n\r\n", false), ("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true),
    ])
    func aHeadSaysWhetherTheConnectionStaysOpen(input: String, keepAlive: Bool) throws {
        #expect(try Self.head(input).isKeepAlive == keepAlive)
    }

    @Test(arguments: [nil, 1, 3, 7])
    func requestsFrameTheSameHoweverTheBytesArrive(piece: Int?) {
        let input = "\r\nGET /a?b=1 HTTP/1.1\r\nHost: h\r\nX-Empty:\r\nX-Pad: \t v w \t\r\n\r\n"
            + "POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"
            + "PUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "3;ext=\"a b\"\r\nabc\r\n0A\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n"
            + "DELETE /d HTTP/1.0\r\ncontent-length: 0\r\n\r\n"
        let result = Self.parse(input, piece: piece)
        #expect(result.error == nil)
        #expect(result.parts == [
            .head("GET /a?b=1 HTTP/1.1 Host=h;X-Empty=;X-Pad=v w"), .end(nil),
            .head("POST /b HTTP/1.1 Host=h;Content-Length=5"), .body("hello"), .end(nil),
            .head("PUT /c HTTP/1.1 Transfer-Encoding=chunked"), .body("abc0123456789"), .end("X-Trailer=t"),
            .head("DELETE /d HTTP/1.0 content-length=0"), .end(nil),
        ])
    }

    /// Each is refused, with the requests before it framed: the ambiguities smuggling relies on.
    @Test(arguments: [
        "GET / HTTP/1.1\r\nX-A: a\r\n folded\r\n\r\n",                          // obs-fold
        "GET / HTTP/1.1\r\nX-A : a\r\n\r\n",                                    // space before the colon
        "GET / HTTP/1.1\r\nX-A: a\nX-B: b\r\n\r\n",                             // bare LF
        "GET / HTTP/1.1\r\nX-A: a\rX-B: b\r\n\r\n",                             // bare CR
        "GET / HTTP/1.1\r\nX-A: a\0b\r\n\r\n",                                  // a control byte
        "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\na",    // two lengths
        "GET / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\na",
        "GET / HTTP/1.1\r\nContent-Length: +1\r\n\r\na",
        "GET / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
        "GET / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "GET / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
        "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        "GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nabcde\r\n0\r\n\r\n",
        "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nabcde\r\n0\r\n\r\n",
        "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcdeX\r\n0\r\n\r\n",
        "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;a\nb\r\nabcde\r\n0\r\n\r\n",
        "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n",
        "get / HTTP/1.1\r\n\r\n",
        "BREW / HTTP/1.1\r\n\r\n",
        "GET  / HTTP/1.1\r\n\r\n",
        "GET /a b HTTP/1.1\r\n\r\n",
        "GET /\u{7F} HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.2\r\n\r\n",
        "GET / HTTP/2.0\r\n\r\n",
        "GET / HTTP/1.1 \r\n\r\n",
        "GET /simple\r\n",                                                     // HTTP/0.9, refused before a head's end
    ])
    func ambiguousFramingIsRefused(request: String) {
        let result = Self.parse("GET /first HTTP/1.1\r\n\r\n" + request)
        #expect(result.error != nil, "accepted: \(result.parts)")
        #expect(result.parts.prefix(2) == [.head("GET /first HTTP/1.1 "), .end(nil)])
    }

    @Test(arguments: [nil, 1])
    func aHeadOverTheLimitIsAHeaderOverflowWhetherOrNotItIsComplete(piece: Int?) {
        let big = "GET / HTTP/1.1\r\nX-Big: \(String(repeating: "b", count: 200))\r\n"
        #expect(Self.parse(big + "\r\n", piece: piece, maxHeadBytes: 100).error == .headerOverflow)
        #expect(Self.parse(big, piece: piece, maxHeadBytes: 100).error == .headerOverflow)
        #expect(Self.parse(big + "\r\n", piece: piece, maxHeadBytes: 300).error == nil)
        let trailers = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\(big.dropFirst(16))\r\n"
        #expect(Self.parse(trailers, piece: piece, maxHeadBytes: 100).error == .headerOverflow)
    }

    @Test func nothingAfterARequestThatSwitchesProtocolsIsRead() {
        let upgrade = Self.parse("GET /ws HTTP/1.1\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\nGET /next HTTP/1.1\r\n\r\n", eof: true)
        #expect(upgrade.error == nil)
        #expect(upgrade.parts == [.head("GET /ws HTTP/1.1 Connection=keep-alive, Upgrade;Upgrade=websocket"), .end(nil)])
        let connect = Self.parse("CONNECT h:443 HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\n\r\n", eof: true)
        #expect(connect.parts == [.head("CONNECT h:443 HTTP/1.1 Content-Length=3"), .end(nil)])
        // `Upgrade` alone, not named by `Connection`, switches nothing.
        let plain = Self.parse("GET /a HTTP/1.1\r\nUpgrade: websocket\r\n\r\nGET /b HTTP/1.1\r\n\r\n")
        #expect(plain.parts.count == 4)
    }

    @Test func inputEndingInsideARequestIsAnError() {
        #expect(Self.parse("GET / HTTP/1.1\r\nHost", eof: true).error == .invalidEOFState)
        #expect(Self.parse("POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\nab", eof: true).error == .invalidEOFState)
        #expect(Self.parse("GET / HTTP/1.1\r\n\r\n", eof: true).error == nil)
    }
}
