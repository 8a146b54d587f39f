import NIOCore
import NIOHTTP1

/// The gateway's HTTP/1 response parser (RFC 9112), for upstream connections: bytes in,
/// response parts out, one part a call, no channel. `UpstreamResponseHandler` runs it in an
/// upstream connection's pipeline; `Fuzz/HTTP1ResponseFuzz.swift` runs it beside llhttp (as NIO
/// runs it) and requires the same responses wherever both accept.
///
/// A head is kept as its bytes (``UpstreamResponseHead``: a slice of the read buffer and where
/// each field lies in it): no `HTTPHeaders` and no `String` per field is made while reading.
///
/// Strict as the request parser is (``HTTP1RequestParser``; the field syntax, the framing
/// fields and chunked bodies are read by the same code, ``HTTP1Syntax``, ``HTTP1FramingFields``,
/// ``ChunkedBody/Decoder``):
/// - the status line is `HTTP/1.1` or `HTTP/1.0`, a space, a status of three digits from 100 to
///   599, then a space and a reason of visible ASCII, space, tab or obs-text, or no reason and
///   no space, then CRLF;
/// - field lines end in CRLF, with no obs-fold and no white space before the colon (RFC 9112
///   §5.2 lets a gateway answer `502` to a folded line, which it does);
/// - framing as RFC 9112 §6.3 says: no body in the answer to `HEAD` (or `CONNECT`), nor in a
///   `1xx`, `204` or `304`, whatever its fields say; else `Transfer-Encoding` ending in
///   `chunked` (in HTTP/1.1 only, once, never beside `Content-Length`), else one
///   `Content-Length` of digits only, else the body runs until the connection closes;
/// - `100 Continue`, `103 Early Hints` and every other interim (`1xx`) response but `101` is
///   read and dropped, and the final response after it is the one handed on (as NIO's decoder
///   did, `informationalResponseStrategy: .drop`);
/// - after a `101` nothing on the connection is read as HTTP: its bytes stay in the buffer
///   for the tunnel that takes the connection over;
/// - a response that does not keep the connection (`Connection: close`, HTTP/1.0 without
///   `keep-alive`, a body until the close) is its last: bytes after it are refused, as llhttp
///   refuses them; so are bytes when no response is owed (``expectResponse(to:)``), empty
///   lines aside.
///
/// Where llhttp reads differently, on purpose (docs/DECISIONS.md, "The gateway's own HTTP/1
/// response parser"): a status outside 100–599 and a version other than 1.0 or 1.1 are
/// refused (llhttp takes `000`, and `HTTP/2.0` which NIO then refused); a `101` ends HTTP on
/// the connection whatever its fields (llhttp reads on after one without `Upgrade`); a head is
/// judged once it has all arrived, so a bad one is refused then, not at its first bad byte.
///
/// A head (status line and fields, or a trailer section) longer than `maxHeadBytes` is
/// `headerOverflow`, whether or not it is complete.
package struct HTTP1ResponseParser {
    private enum State {
        /// Waiting for a whole head; `searched` bytes of it hold no end.
        case head(searched: Int)
        /// The response's body, or (``HTTP1Body/none``) its end.
        case body(HTTP1Body)
        /// A `101` switched protocols: what follows is not HTTP.
        case switched
        /// The last response ended: the connection is not kept.
        case closed
    }

    /// The head limit NIO's decoder had for an upstream's response: 80 KiB.
    package static let defaultMaxHeadBytes = 80 * 1024

    private var state = State.head(searched: 0)
    /// The method of the request whose response is owed; nil: none is.
    private var method: HTTPMethod?
    /// Whether the connection is kept after the response under way.
    private var keepsAlive = true
    /// Where the fields of the head being read lie: kept from head to head (its storage is
    /// reused), copied into the head once it is read.
    private var lines: [HTTP1FieldLine] = []
    private let maxHeadBytes: Int

    package init(maxHeadBytes: Int = Self.defaultMaxHeadBytes) {
        self.maxHeadBytes = maxHeadBytes
    }

    /// A request with `method` was sent: its response is the next one read (a response to
    /// `HEAD` has no body, whatever its fields say).
    package mutating func expectResponse(to method: HTTPMethod) {
        self.method = method
    }

    /// Whether the next part is the response's end, which needs no more bytes.
    package var endsNext: Bool {
        if case .body(let body) = state { body.endsNext } else { false }
    }

    /// The next part that `buffer` holds whole, consumed from it, or nil when more bytes are
    /// needed (or the connection switched protocols, or its last response ended). Throws on
    /// bytes no response may hold.
    package mutating func next(_ buffer: inout ByteBuffer) throws -> UpstreamResponsePart? {
        switch state {
        case .head(let searched):
            return try head(&buffer, searched: searched)
        case .body(var body):
            let part = try body.next(&buffer)
            state = .body(body)
            switch part {
            case .data(let chunk): return .body(chunk)
            case .end(let trailers): return endOfResponse(trailers: trailers)
            case nil: return nil
            }
        case .switched:
            return nil
        case .closed:
            _ = HTTP1Syntax.skipEmptyLines(&buffer)
            if Self.holdsMoreThanALineStart(buffer) { throw HTTPParserError.closedConnection }
            return nil
        }
    }

    /// The connection's input ended with `buffer` unread: the end of a body read until the
    /// close, or an error if a response was under way.
    package mutating func inputEnded(unread buffer: ByteBuffer) throws -> UpstreamResponsePart? {
        switch state {
        case .body(let body) where body.endsAtClose:
            state = .closed
            return .end(nil)
        case .switched, .closed:
            return nil
        case .head:
            if buffer.readableBytes > 0 { throw HTTPParserError.invalidEOFState }
            return nil
        case .body:
            throw HTTPParserError.invalidEOFState
        }
    }

    // MARK: Heads

    private mutating func head(_ buffer: inout ByteBuffer, searched: Int) throws -> UpstreamResponsePart? {
        var searched = searched
        while true {
            if searched == 0 {
                _ = HTTP1Syntax.skipEmptyLines(&buffer)
                guard Self.holdsMoreThanALineStart(buffer) else { return nil }
                // Bytes of a response nobody asked for: the upstream is out of step.
                guard method != nil else { throw NIOHTTPDecoderError.unsolicitedResponse }
            }
            guard let length = try HTTP1Syntax.headLength(buffer, searched: searched, maxHeadBytes: maxHeadBytes) else {
                state = .head(searched: HTTP1Syntax.searched(buffer))
                return nil
            }
            let parsed = try buffer.withUnsafeReadableBytes { bytes in
                try Self.parseHead(UnsafeRawBufferPointer(rebasing: bytes[..<length]), lines: &lines)
            }
            let bytes = buffer.readSlice(length: length)!
            let code = parsed.status
            if code < 200, code != 101 {
                // An interim response: dropped, the final one follows (unless it said the
                // connection closes after it, which leaves no room for one).
                guard parsed.framing.keepsAlive(version: parsed.version) else {
                    state = .closed
                    return try next(&buffer)
                }
                searched = 0
                state = .head(searched: 0)
                continue
            }
            return .head(finalHead(parsed, bytes: bytes))
        }
    }

    /// The final response's head, the parser set to read what follows it.
    private mutating func finalHead(_ parsed: ParsedHead, bytes: ByteBuffer) -> UpstreamResponseHead {
        let code = parsed.status
        let framing: UpstreamResponseHead.Framing
        if code == 101 {
            framing = .switched
        } else if method == .HEAD || method == .CONNECT || code == 204 || code == 304 {
            framing = .bodiless
        } else {
            switch parsed.body {
            case .chunked: framing = .chunked
            case .length(let length): framing = .length(length)
            case .none: framing = .untilClose
            }
        }
        method = nil
        keepsAlive = parsed.framing.keepsAlive(version: parsed.version) && framing != .untilClose && framing != .switched
        switch framing {
        case .bodiless: state = .body(.none)
        case .length(let length): state = .body(.length(length))
        case .chunked: state = .body(.chunked(maxTrailerBytes: maxHeadBytes))
        case .untilClose: state = .body(.untilClose)
        case .switched: state = .switched
        }
        return lines.withUnsafeBufferPointer { lines in
            UpstreamResponseHead(
                UpstreamResponseHead.Summary(
                    status: HTTPResponseStatus(statusCode: code), version: parsed.version, framing: framing, isKeepAlive: keepsAlive, bytes: bytes
                ),
                lines: lines
            )
        }
    }

    private struct ParsedHead {
        var status: Int
        var version: HTTPVersion
        var framing: HTTP1FramingFields
        var body: HTTP1FramingFields.Framing
    }

    /// Reads the head in `bytes`, where its fields lie going into `lines`.
    private static func parseHead(_ bytes: UnsafeRawBufferPointer, lines: inout [HTTP1FieldLine]) throws -> ParsedHead {
        let (version, status, fieldsStart) = try parseStatusLine(bytes)
        let framing = try HTTP1Syntax.readFieldSection(bytes, from: fieldsStart, into: &lines)
        // Judged for every status, bodiless ones too: an ambiguous head is refused whatever follows.
        let body = try framing.framing(version: version)
        return ParsedHead(status: status, version: version, framing: framing, body: body)
    }

    /// The status line at the start of `bytes`: the version, the status, and where the fields
    /// start after it.
    private static func parseStatusLine(_ bytes: UnsafeRawBufferPointer) throws -> (HTTPVersion, Int, Int) {
        // "HTTP/1.1 200" and at least the CRLF.
        guard bytes.count >= 14, HTTP1Syntax.holds("HTTP/1.", in: bytes) else { throw HTTPParserError.invalidVersion }
        let version: HTTPVersion
        switch bytes[7] {
        case UInt8(ascii: "1"): version = .http1_1
        case UInt8(ascii: "0"): version = .http1_0
        default: throw HTTPParserError.invalidVersion
        }
        guard bytes[8] == 0x20 else { throw HTTPParserError.invalidVersion }
        var status = 0
        for index in 9..<12 {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { throw HTTPParserError.invalidStatus }
            status = status * 10 + Int(digit)
        }
        guard (100...599).contains(status) else { throw HTTPParserError.invalidStatus }
        var index = 12
        if bytes[index] == 0x20 {
            index += 1
            while bytes[index].isFieldValueByte { index += 1 }
        }
        guard bytes[index] == 0x0D else { throw HTTPParserError.invalidStatus }
        guard bytes[index + 1] == 0x0A else { throw HTTPParserError.lfExpected }
        return (version, status, index + 2)
    }

    private mutating func endOfResponse(trailers: HTTPHeaders?) -> UpstreamResponsePart {
        state = keepsAlive ? .head(searched: 0) : .closed
        return .end(trailers)
    }

    /// Whether `buffer` holds more than empty lines (and what may start one): read right behind
    /// a response's end, the start of an answer to a request not sent yet.
    package static func holdsMoreThanEmptyLines(_ buffer: ByteBuffer) -> Bool {
        guard buffer.readableBytes > 0 else { return false }
        var rest = buffer
        _ = HTTP1Syntax.skipEmptyLines(&rest)
        return holdsMoreThanALineStart(rest)
    }

    /// Whether `buffer` holds more than what may be the start of an empty line (a CR whose LF
    /// has not arrived): a byte that starts something else.
    private static func holdsMoreThanALineStart(_ buffer: ByteBuffer) -> Bool {
        buffer.readableBytes > 1 || (buffer.readableBytes == 1 && buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) != 0x0D)
    }
}
