import NIOCore
import NIOHTTP1

/// The gateway's HTTP/1.1 request parser (RFC 9112): bytes in, request parts out, one part a
/// call, no channel; the head kept as its bytes (``ClientRequestHead``), no `String` per field.
/// `HTTP1ConnectionHandler` runs it on each read's bytes; the fuzzers run it beside NIO's
/// llhttp-based decoder and require the same framing wherever both accept.
///
/// Strict where lenience lets two parsers frame one message differently (request smuggling):
/// - lines end in CRLF; a bare CR or a bare LF is refused, as is a field line folded onto
///   the next (obs-fold) and white space between a field name and its colon;
/// - `Content-Length` is digits only and appears once; `Transfer-Encoding` appears once, in
///   an HTTP/1.1 request, ends in `chunked`, and never beside `Content-Length`;
/// - the method is one NIO knows (llhttp's set), the target visible ASCII, the version 1.0 or 1.1;
/// - chunk sizes are hex without sign or white space, each chunk's data ends in CRLF.
/// After a request that switches protocols (`CONNECT`, or `Upgrade` named by `Connection`)
/// nothing more on the connection is read as HTTP, as llhttp does.
///
/// A head (request line and fields, or the trailer section) longer than `maxHeadBytes` is
/// `headerOverflow` (`431`), whether or not it is complete. A head is searched for its end
/// once per byte however it arrives, then parsed once.
package struct HTTP1RequestParser {
    private enum State {
        /// Waiting for a whole head; `searched` bytes of it hold no end, and `lineSearched` no
        /// end of the request line (nil: the line was whole and valid).
        case head(searched: Int, lineSearched: Int?)
        /// The request's body, or (``HTTP1Body/none``) its end.
        case body(HTTP1Body)
        /// A request switched protocols: what follows is not HTTP.
        case upgraded
    }

    private var state = State.head(searched: 0, lineSearched: 0)
    /// Whether the request being read switches protocols when it ends.
    private var upgradesAtEnd = false
    private let maxHeadBytes: Int
    /// Where the fields of the head being read lie, kept between heads for its capacity.
    private var lines: [HTTP1FieldLine] = []

    package init(maxHeadBytes: Int) {
        self.maxHeadBytes = maxHeadBytes
    }

    /// Whether the request under way is incomplete (bytes of it read, its end not yet).
    package var isMidRequest: Bool {
        switch state {
        case .head, .upgraded: false
        case .body: true
        }
    }

    /// Whether the next part is the request's end, which needs no more bytes.
    package var endsNext: Bool {
        if case .body(let body) = state { body.endsNext } else { false }
    }

    /// The next part that `buffer` holds whole, consumed from it, or nil when more bytes are
    /// needed (or the connection switched protocols). Throws on bytes no request may hold.
    package mutating func next(_ buffer: inout ByteBuffer) throws -> ClientRequestPart? {
        switch state {
        case .head(let searched, let lineSearched):
            return try head(&buffer, searched: searched, lineSearched: lineSearched)
        case .body(var body):
            let part = try body.next(&buffer)
            state = .body(body)
            switch part {
            case .data(let chunk): return .body(chunk)
            case .end(let trailers): return endOfRequest(trailers: trailers)
            case nil: return nil
            }
        case .upgraded:
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            return nil
        }
    }

    /// The connection's input ended with `buffer` unread: an error if a request was under way.
    package func inputEnded(unread buffer: ByteBuffer) throws {
        if case .upgraded = state { return }
        if isMidRequest || buffer.readableBytes > 0 { throw HTTPParserError.invalidEOFState }
    }

    // MARK: Heads

    private mutating func head(_ buffer: inout ByteBuffer, searched: Int, lineSearched: Int?) throws -> ClientRequestPart? {
        var lineSearched = lineSearched
        if searched == 0, HTTP1Syntax.skipEmptyLines(&buffer) { lineSearched = 0 }
        guard let length = try HTTP1Syntax.headLength(buffer, searched: searched, maxHeadBytes: maxHeadBytes) else {
            // A request line is judged once whole, not when its head is: llhttp reads a line
            // without a version as a whole HTTP/0.9 request, which this refuses at once.
            let lineChecked: Int? = try lineSearched.flatMap { from in
                try buffer.withUnsafeReadableBytes { bytes in
                    guard let lf = bytes[from...].firstIndex(of: 0x0A) else { return bytes.count }
                    _ = try Self.parseRequestLine(UnsafeRawBufferPointer(rebasing: bytes[...lf]))
                    return nil
                }
            }
            state = .head(searched: HTTP1Syntax.searched(buffer), lineSearched: lineChecked)
            return nil
        }
        let parsed = try buffer.withUnsafeReadableBytes { bytes in
            try Self.parseHead(UnsafeRawBufferPointer(rebasing: bytes[..<length]), lines: &lines)
        }
        // The head keeps its bytes as a slice of the read buffer: no copy.
        let bytes = buffer.readSlice(length: length)!
        let head = lines.withUnsafeBufferPointer { lines in
            ClientRequestHead(
                ClientRequestHead.Summary(
                    method: parsed.method, target: parsed.target, version: parsed.version,
                    isKeepAlive: parsed.framing.keepsAlive(version: parsed.version), declaredBody: parsed.declaredBody, bytes: bytes
                ),
                lines: lines
            )
        }
        upgradesAtEnd = head.method == .CONNECT || (parsed.framing.connectionUpgrade && parsed.framing.upgradeField)
        // llhttp reads nothing after a CONNECT head, whatever it declares.
        switch head.method == .CONNECT ? .none : parsed.body {
        case .none: state = .body(.none)
        case .length(let length): state = .body(.length(length))
        case .chunked: state = .body(.chunked(maxTrailerBytes: maxHeadBytes))
        }
        return .head(head)
    }

    private struct ParsedHead {
        var method: HTTPMethod
        var target: String
        var version: HTTPVersion
        var framing: HTTP1FramingFields
        var body: HTTP1FramingFields.Framing

        /// The body as the edge and the engine read it: a length of zero is none.
        var declaredBody: DeclaredBody {
            switch body {
            case .none, .length(0): .none
            case .length(let length): .length(length)
            case .chunked: .chunked
            }
        }
    }

    /// Reads the head in `bytes`, where its fields lie going into `lines`.
    private static func parseHead(_ bytes: UnsafeRawBufferPointer, lines: inout [HTTP1FieldLine]) throws -> ParsedHead {
        let (method, target, version, index) = try parseRequestLine(bytes)
        let framing = try HTTP1Syntax.readFieldSection(bytes, from: index, into: &lines)
        // Judged for every method, CONNECT too: an ambiguous head is refused whatever follows.
        let body = try framing.framing(version: version)
        return ParsedHead(method: method, target: target, version: version, framing: framing, body: body)
    }

    /// The request line at the start of `bytes` and where the fields start after it.
    private static func parseRequestLine(_ bytes: UnsafeRawBufferPointer) throws -> (HTTPMethod, String, HTTPVersion, Int) {
        var index = 0
        while index < bytes.count, bytes[index].isTokenByte { index += 1 }
        guard index > 0, index < bytes.count, bytes[index] == 0x20 else { throw HTTPParserError.invalidMethod }
        let method = try Self.method(UnsafeRawBufferPointer(rebasing: bytes[..<index]))
        index += 1
        let targetStart = index
        while index < bytes.count, bytes[index] > 0x20, bytes[index] < 0x7F { index += 1 }
        guard index > targetStart, index < bytes.count, bytes[index] == 0x20 else { throw HTTPParserError.invalidURL }
        let target = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[targetStart..<index]), as: UTF8.self)
        index += 1
        guard index + 10 <= bytes.count, HTTP1Syntax.holds("HTTP/1.", in: bytes, at: index), bytes[index + 8] == 0x0D, bytes[index + 9] == 0x0A else {
            throw HTTPParserError.invalidVersion
        }
        switch bytes[index + 7] {
        case UInt8(ascii: "1"): return (method, target, .http1_1, index + 10)
        case UInt8(ascii: "0"): return (method, target, .http1_0, index + 10)
        default: throw HTTPParserError.invalidVersion
        }
    }

    private static func method(_ bytes: UnsafeRawBufferPointer) throws -> HTTPMethod {
        if bytes.count == 3, HTTP1Syntax.holds("GET", in: bytes) { return .GET }
        if bytes.count == 4, HTTP1Syntax.holds("POST", in: bytes) { return .POST }
        let method = HTTPMethod(rawValue: String(decoding: bytes, as: UTF8.self))
        if case .RAW = method { throw HTTPParserError.invalidMethod }
        return method
    }

    private mutating func endOfRequest(trailers: HTTPHeaders?) -> ClientRequestPart {
        state = upgradesAtEnd ? .upgraded : .head(searched: 0, lineSearched: 0)
        return .end(trailers)
    }
}
