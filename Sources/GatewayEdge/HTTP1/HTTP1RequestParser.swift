import NIOCore
import NIOHTTP1

/// The gateway's HTTP/1.1 request parser (RFC 9112): bytes in, request parts out, one part a
/// call, no channel. ``HTTP1RequestDecoder`` runs it in the pipeline; the fuzzers run it
/// beside NIO's llhttp-based decoder and require the same framing wherever both accept.
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
        /// A `Content-Length` body with `remaining` bytes to come.
        case body(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        /// The CRLF after a chunk's data.
        case chunkDataEnd
        case trailers(searched: Int)
        /// The request's end is the next part.
        case end
        /// A request switched protocols: what follows is not HTTP.
        case upgraded
    }

    private enum Framing {
        case bodiless
        case length(Int)
        case chunked
    }

    private var state = State.head(searched: 0, lineSearched: 0)
    /// Whether the request being read switches protocols when it ends.
    private var upgradesAtEnd = false
    private let maxHeadBytes: Int

    /// The longest chunk-size line (its extensions included) before it is refused.
    private static let maxChunkLineBytes = 4096

    package init(maxHeadBytes: Int) {
        self.maxHeadBytes = maxHeadBytes
    }

    /// Whether the request under way is incomplete (bytes of it read, its end not yet).
    package var isMidRequest: Bool {
        switch state {
        case .head, .upgraded: false
        case .body, .chunkSize, .chunkData, .chunkDataEnd, .trailers, .end: true
        }
    }

    /// Whether the next part is the request's end, which needs no more bytes.
    package var endsNext: Bool {
        if case .end = state { true } else { false }
    }

    /// The next part that `buffer` holds whole, consumed from it, or nil when more bytes are
    /// needed (or the connection switched protocols). Throws on bytes no request may hold.
    package mutating func next(_ buffer: inout ByteBuffer) throws -> HTTPServerRequestPart? {
        switch state {
        case .head(let searched, let lineSearched):
            return try head(&buffer, searched: searched, lineSearched: lineSearched)
        case .body(let remaining):
            guard let (slice, left) = Self.slice(&buffer, upTo: remaining) else { return nil }
            state = left == 0 ? .end : .body(remaining: left)
            return .body(slice)
        case .chunkSize:
            return try chunkSize(&buffer)
        case .chunkData(let remaining):
            guard let (slice, left) = Self.slice(&buffer, upTo: remaining) else { return nil }
            state = left == 0 ? .chunkDataEnd : .chunkData(remaining: left)
            return .body(slice)
        case .chunkDataEnd:
            guard buffer.readableBytes >= 2 else { return nil }
            guard buffer.readInteger(as: UInt16.self) == Self.crlf else { throw HTTPParserError.invalidChunkSize }
            state = .chunkSize
            return try chunkSize(&buffer)
        case .trailers(let searched):
            return try trailers(&buffer, searched: searched)
        case .end:
            return endOfRequest(trailers: nil)
        case .upgraded:
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            return nil
        }
    }

    /// As much of a body's `remaining` bytes as `buffer` holds, and how many are left after it.
    private static func slice(_ buffer: inout ByteBuffer, upTo remaining: Int) -> (ByteBuffer, left: Int)? {
        guard buffer.readableBytes > 0 else { return nil }
        let count = min(remaining, buffer.readableBytes)
        return (buffer.readSlice(length: count)!, remaining - count)
    }

    /// The connection's input ended with `buffer` unread: an error if a request was under way.
    package func inputEnded(unread buffer: ByteBuffer) throws {
        if case .upgraded = state { return }
        if isMidRequest || buffer.readableBytes > 0 { throw HTTPParserError.invalidEOFState }
    }

    // MARK: Heads

    private mutating func head(_ buffer: inout ByteBuffer, searched: Int, lineSearched: Int?) throws -> HTTPServerRequestPart? {
        // Empty lines before a request line are ignored (RFC 9112 §2.2).
        var lineSearched = lineSearched
        while searched == 0, buffer.readableBytes >= 2, buffer.getInteger(at: buffer.readerIndex, as: UInt16.self) == Self.crlf {
            buffer.moveReaderIndex(forwardBy: 2)
            lineSearched = 0
        }
        guard let length = try headLength(buffer, searched: searched) else {
            // A request line is judged once whole, not when its head is: llhttp reads a line
            // without a version as a whole HTTP/0.9 request, which this refuses at once.
            let lineChecked: Int? = try lineSearched.flatMap { from in
                try buffer.withUnsafeReadableBytes { bytes in
                    guard let lf = bytes[from...].firstIndex(of: 0x0A) else { return bytes.count }
                    _ = try Self.parseRequestLine(UnsafeRawBufferPointer(rebasing: bytes[...lf]))
                    return nil
                }
            }
            state = .head(searched: max(0, buffer.readableBytes - 3), lineSearched: lineChecked)
            return nil
        }
        let (head, framing) = try buffer.withUnsafeReadableBytes { bytes in
            try Self.parseHead(UnsafeRawBufferPointer(rebasing: bytes[..<length]))
        }
        buffer.moveReaderIndex(forwardBy: length)
        upgradesAtEnd = head.method == .CONNECT || framing.upgrades
        // llhttp reads nothing after a CONNECT head, whatever it declares.
        switch head.method == .CONNECT ? .bodiless : framing.body {
        case .bodiless, .length(0):
            state = .end
        case .length(let count):
            state = .body(remaining: count)
        case .chunked:
            state = .chunkSize
        }
        return .head(head)
    }

    /// The length of the head at the start of `buffer` through its empty line, or nil if
    /// it has not all arrived; `headerOverflow` once it is, or would be, over the limit.
    private func headLength(_ buffer: ByteBuffer, searched: Int) throws -> Int? {
        let found: Int? = buffer.withUnsafeReadableBytes { bytes in
            var index = searched
            let count = bytes.count
            while index + 3 < count {
                // The fourth byte of CRLFCRLF decides most positions alone.
                if bytes[index + 3] != 0x0A { index += bytes[index + 3] == 0x0D ? 1 : 4; continue }
                if bytes[index] == 0x0D, bytes[index + 1] == 0x0A, bytes[index + 2] == 0x0D { return index + 4 }
                index += 1
            }
            return nil
        }
        if let found {
            if found > maxHeadBytes { throw HTTPParserError.headerOverflow }
            return found
        }
        if buffer.readableBytes > maxHeadBytes { throw HTTPParserError.headerOverflow }
        return nil
    }

    private struct Fields {
        var list: [(String, String)] = []
        var contentLength: Int?
        var transferEncodings = 0
        var chunked = false
        var connectionUpgrade = false
        var upgradeField = false
    }

    private static func parseHead(_ bytes: UnsafeRawBufferPointer) throws -> (HTTPRequestHead, (body: Framing, upgrades: Bool)) {
        let (method, target, version, index) = try parseRequestLine(bytes)
        var fields = Fields()
        try parseFields(bytes, from: index, into: &fields, framing: true)
        if fields.transferEncodings > 0 {
            // A chunked body's end cannot be told from a length beside it, nor by an HTTP/1.0
            // recipient (RFC 9112 §6.1).
            if fields.contentLength != nil { throw HTTPParserError.unexpectedContentLength }
            if version == .http1_0 || fields.transferEncodings > 1 || !fields.chunked { throw HTTPParserError.invalidHeaderToken }
        }
        let body: Framing = fields.chunked ? .chunked : fields.contentLength.map { .length($0) } ?? .bodiless
        let head = HTTPRequestHead(version: version, method: method, uri: target, headers: HTTPHeaders(fields.list))
        return (head, (body, fields.connectionUpgrade && fields.upgradeField))
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
        guard index + 10 <= bytes.count, bytes[index..<(index + 7)].elementsEqual("HTTP/1.".utf8), bytes[index + 8] == 0x0D, bytes[index + 9] == 0x0A else {
            throw HTTPParserError.invalidVersion
        }
        switch bytes[index + 7] {
        case UInt8(ascii: "1"): return (method, target, .http1_1, index + 10)
        case UInt8(ascii: "0"): return (method, target, .http1_0, index + 10)
        default: throw HTTPParserError.invalidVersion
        }
    }

    /// The field lines from `start` to the head's empty line (the last two bytes of `bytes`).
    private static func parseFields(_ bytes: UnsafeRawBufferPointer, from start: Int, into fields: inout Fields, framing: Bool) throws {
        var index = start
        let end = bytes.count - 2
        while index < end {
            let nameStart = index
            while bytes[index].isTokenByte { index += 1 }
            // No name (a folded line starts with white space), or white space before the colon.
            guard index > nameStart, bytes[index] == UInt8(ascii: ":") else { throw HTTPParserError.invalidHeaderToken }
            let name = UnsafeRawBufferPointer(rebasing: bytes[nameStart..<index])
            index += 1
            while bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
            let valueStart = index
            while bytes[index].isFieldValueByte { index += 1 }
            guard bytes[index] == 0x0D else { throw HTTPParserError.invalidHeaderToken }
            guard bytes[index + 1] == 0x0A else { throw HTTPParserError.lfExpected }
            var valueEnd = index
            while valueEnd > valueStart, bytes[valueEnd - 1] == 0x20 || bytes[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            let value = UnsafeRawBufferPointer(rebasing: bytes[valueStart..<valueEnd])
            index += 2
            if framing { try note(name: name, value: value, in: &fields) }
            fields.list.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
    }

    /// What a field says about the request's framing and protocol switch.
    private static func note(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in fields: inout Fields) throws {
        if name.equalsCaseInsensitively("content-length") {
            guard fields.contentLength == nil else { throw HTTPParserError.unexpectedContentLength }
            guard let length = value.decimalValue else { throw HTTPParserError.invalidContentLength }
            fields.contentLength = length
        } else if name.equalsCaseInsensitively("transfer-encoding") {
            fields.transferEncodings += 1
            let last = value.lastIndex(of: UInt8(ascii: ",")).map { UnsafeRawBufferPointer(rebasing: value[($0 + 1)...]) } ?? value
            fields.chunked = last.trimmingWhiteSpace.equalsCaseInsensitively("chunked")
        } else if name.equalsCaseInsensitively("connection") {
            for token in value.split(separator: UInt8(ascii: ",")) where UnsafeRawBufferPointer(rebasing: token).trimmingWhiteSpace.equalsCaseInsensitively("upgrade") {
                fields.connectionUpgrade = true
            }
        } else if name.equalsCaseInsensitively("upgrade") {
            fields.upgradeField = true
        }
    }

    private static func method(_ bytes: UnsafeRawBufferPointer) throws -> HTTPMethod {
        if bytes.elementsEqual("GET".utf8) { return .GET }
        if bytes.elementsEqual("POST".utf8) { return .POST }
        let method = HTTPMethod(rawValue: String(decoding: bytes, as: UTF8.self))
        if case .RAW = method { throw HTTPParserError.invalidMethod }
        return method
    }

    // MARK: Chunked bodies

    private mutating func chunkSize(_ buffer: inout ByteBuffer) throws -> HTTPServerRequestPart? {
        let line: (length: Int, size: Int)? = try buffer.withUnsafeReadableBytes { bytes in
            guard let lf = bytes.prefix(Self.maxChunkLineBytes).firstIndex(of: 0x0A) else {
                if bytes.count >= Self.maxChunkLineBytes { throw HTTPParserError.invalidChunkSize }
                return nil
            }
            guard lf > 0, bytes[lf - 1] == 0x0D else { throw HTTPParserError.lfExpected }
            var index = 0
            var size = 0
            while index < lf - 1, let digit = bytes[index].hexValue {
                // Sixteen hex digits would overflow; no body is that large anyway.
                guard index < 15 else { throw HTTPParserError.invalidChunkSize }
                size = size << 4 | digit
                index += 1
            }
            guard index > 0 else { throw HTTPParserError.invalidChunkSize }
            if index < lf - 1 {
                // Extensions (RFC 9112 §7.1.1) are ignored, but must not hide a line break.
                while bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
                guard bytes[index] == UInt8(ascii: ";") else { throw HTTPParserError.invalidChunkSize }
                for byte in bytes[index..<(lf - 1)] where !byte.isFieldValueByte { throw HTTPParserError.invalidChunkSize }
            }
            return (lf + 1, size)
        }
        guard let line else { return nil }
        buffer.moveReaderIndex(forwardBy: line.length)
        if line.size == 0 {
            state = .trailers(searched: 0)
            return try trailers(&buffer, searched: 0)
        }
        state = .chunkData(remaining: line.size)
        return try next(&buffer)
    }

    private mutating func trailers(_ buffer: inout ByteBuffer, searched: Int) throws -> HTTPServerRequestPart? {
        guard buffer.readableBytes >= 2 else { return nil }
        if searched == 0, buffer.getInteger(at: buffer.readerIndex, as: UInt16.self) == Self.crlf {
            buffer.moveReaderIndex(forwardBy: 2)
            return endOfRequest(trailers: nil)
        }
        guard let length = try headLength(buffer, searched: searched) else {
            state = .trailers(searched: max(0, buffer.readableBytes - 3))
            return nil
        }
        var fields = Fields()
        try buffer.withUnsafeReadableBytes { bytes in
            try Self.parseFields(UnsafeRawBufferPointer(rebasing: bytes[..<length]), from: 0, into: &fields, framing: false)
        }
        buffer.moveReaderIndex(forwardBy: length)
        return endOfRequest(trailers: HTTPHeaders(fields.list))
    }

    private mutating func endOfRequest(trailers: HTTPHeaders?) -> HTTPServerRequestPart {
        state = upgradesAtEnd ? .upgraded : .head(searched: 0, lineSearched: 0)
        return .end(trailers)
    }

    /// CRLF as `readInteger`/`getInteger` read it (big-endian).
    private static let crlf: UInt16 = 0x0D0A
}

extension UInt8 {
    /// A `tchar` (RFC 9110 §5.6.2): what names and methods are made of.
    fileprivate var isTokenByte: Bool {
        switch self {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// A byte a field value may hold: visible ASCII, space, tab, obs-text (RFC 9110 §5.5).
    fileprivate var isFieldValueByte: Bool {
        self == 0x09 || (self >= 0x20 && self != 0x7F)
    }

    fileprivate var hexValue: Int? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(self - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(self - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(self - UInt8(ascii: "A") + 10)
        default: nil
        }
    }
}

extension UnsafeRawBufferPointer {
    fileprivate func equalsCaseInsensitively(_ lowercase: StaticString) -> Bool {
        guard count == lowercase.utf8CodeUnitCount else { return false }
        let expected = UnsafeRawBufferPointer(start: lowercase.utf8Start, count: count)
        for index in 0..<count where self[index] | 0x20 != expected[index] {
            return false
        }
        return true
    }

    fileprivate var trimmingWhiteSpace: UnsafeRawBufferPointer {
        var start = 0
        var end = count
        while start < end, self[start] == 0x20 || self[start] == 0x09 { start += 1 }
        while end > start, self[end - 1] == 0x20 || self[end - 1] == 0x09 { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: self[start..<end])
    }

    /// Digits only, no sign or white space; nil past what an `Int` holds.
    fileprivate var decimalValue: Int? {
        guard !isEmpty else { return nil }
        var value = 0
        for byte in self {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }
}
