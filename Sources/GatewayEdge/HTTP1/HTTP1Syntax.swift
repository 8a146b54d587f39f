#if canImport(Glibc)
import Glibc
#endif
import GatewayPrimitives
import NIOCore
import NIOHTTP1

/// What the gateway's two HTTP/1 parsers share (RFC 9112), the request's
/// (``HTTP1RequestParser``) and the upstream response's (``HTTP1ResponseParser``): where a head
/// ends and its limit, field lines checked strictly, what the fields say about the framing
/// (``HTTP1FramingFields``), and a body's bytes by length. Chunked bodies are read by
/// ``ChunkedBody/Decoder``.
package enum HTTP1Syntax {
    /// The length of the head at the start of `buffer` through its empty line, or nil if it
    /// has not all arrived; `headerOverflow` once it is, or would be, over `maxHeadBytes`.
    /// `searched`: how many bytes of it are known to hold no end (``searched(_:)``).
    static func headLength(_ buffer: ByteBuffer, searched: Int, maxHeadBytes: Int) throws -> Int? {
        let found: Int? = buffer.withUnsafeReadableBytes { bytes in
            guard let base = bytes.baseAddress else { return nil }
            // Each LF found (by memchr, many bytes a step) is looked behind for CR LF CR; the
            // first one that could end a CRLFCRLF starting after `searched` is 3 bytes on.
            var index = searched + 3
            while index < bytes.count {
                guard let lf = memchr(base + index, 0x0A, bytes.count - index) else { return nil }
                let at = UnsafeRawPointer(lf) - base
                if bytes[at - 1] == 0x0D, bytes[at - 2] == 0x0A, bytes[at - 3] == 0x0D { return at + 1 }
                index = at + 1
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

    /// How many bytes of `buffer`, which held no head's end, need not be searched again: a head
    /// is searched once per byte however it arrives.
    static func searched(_ buffer: ByteBuffer) -> Int {
        max(0, buffer.readableBytes - 3)
    }

    /// Skips the empty lines before a start line (RFC 9112 §2.2); whether any were skipped.
    static func skipEmptyLines(_ buffer: inout ByteBuffer) -> Bool {
        var skipped = false
        while buffer.readableBytes >= 2, buffer.getInteger(at: buffer.readerIndex, as: UInt16.self) == crlf {
            buffer.moveReaderIndex(forwardBy: 2)
            skipped = true
        }
        return skipped
    }

    /// Hands `field` each field line from `start` to the section's empty line (the last two
    /// bytes of `bytes`): its name, its value without the white space around it, and where its
    /// line ends (after its CRLF). Lines end in CRLF; a bare CR or LF, a control byte in a
    /// value, a line folded onto the next (obs-fold) and white space between a name and its
    /// colon are refused.
    static func forEachFieldLine(
        _ bytes: UnsafeRawBufferPointer, from start: Int,
        _ field: (_ name: Range<Int>, _ value: Range<Int>, _ lineEnd: Int) throws -> Void
    ) throws {
        var index = start
        let end = bytes.count - 2
        while index < end {
            let nameStart = index
            while bytes[index].isTokenByte { index += 1 }
            // No name (a folded line starts with white space), or white space before the colon.
            guard index > nameStart, bytes[index] == UInt8(ascii: ":") else { throw HTTPParserError.invalidHeaderToken }
            let nameEnd = index
            index += 1
            while bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
            let valueStart = index
            index = fieldValueEnd(bytes, from: index)
            guard bytes[index] == 0x0D else { throw HTTPParserError.invalidHeaderToken }
            guard bytes[index + 1] == 0x0A else { throw HTTPParserError.lfExpected }
            var valueEnd = index
            while valueEnd > valueStart, bytes[valueEnd - 1] == 0x20 || bytes[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            index += 2
            try field(nameStart..<nameEnd, valueStart..<valueEnd, index)
        }
    }

    /// Reads a head's field section from `start`: where each field line lies goes into `lines`
    /// (emptied first), and its framing fields are noted as they come.
    static func readFieldSection(
        _ bytes: UnsafeRawBufferPointer, from start: Int, into lines: inout [HTTP1FieldLine]
    ) throws -> HTTP1FramingFields {
        var framing = HTTP1FramingFields()
        lines.removeAll(keepingCapacity: true)
        var lineStart = start
        try forEachFieldLine(bytes, from: start) { name, value, lineEnd in
            try framing.note(name: UnsafeRawBufferPointer(rebasing: bytes[name]), value: UnsafeRawBufferPointer(rebasing: bytes[value]))
            lines.append(HTTP1FieldLine(start: lineStart, name: name, value: value, end: lineEnd))
            lineStart = lineEnd
        }
        return framing
    }

    /// Where a field value starting at `start` ends: the first byte a value may not hold (the
    /// CR of its line, in a well-formed head, which always holds one further on). Eight bytes at
    /// a time while none of them is a control byte or DEL: values (tokens, cookies) are most of
    /// a head's bytes.
    static func fieldValueEnd(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        var index = start
        if let base = bytes.baseAddress {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            while index + 8 <= bytes.count {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                // A byte below 0x20 sets its high bit here (exactly whether there is one, not which).
                let control = (word &- ones &* 0x20) & ~word & highs
                let del = word ^ (ones &* 0x7F)
                if control | ((del &- ones) & ~del & highs) != 0 { break }
                index += 8
            }
        }
        while bytes[index].isFieldValueByte { index += 1 }
        return index
    }

    /// Whether `bytes` hold `text` at `offset` (a start line's fixed parts).
    static func holds(_ text: StaticString, in bytes: UnsafeRawBufferPointer, at offset: Int = 0) -> Bool {
        let count = text.utf8CodeUnitCount
        guard offset + count <= bytes.count, let base = bytes.baseAddress else { return false }
        return memcmp(base + offset, text.utf8Start, count) == 0
    }

    /// As much of a body's `remaining` bytes as `buffer` holds, and how many are left after it.
    static func slice(_ buffer: inout ByteBuffer, upTo remaining: Int) -> (ByteBuffer, left: Int)? {
        guard buffer.readableBytes > 0 else { return nil }
        let count = min(remaining, buffer.readableBytes)
        return (buffer.readSlice(length: count)!, remaining - count)
    }

    /// Hands `body` each element of a comma-separated list value (RFC 9110 §5.6.1: `Connection`,
    /// `Transfer-Encoding`), the white space around it removed, empty ones skipped.
    package static func forEachElement(ofList value: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        var start = 0
        while start < value.count {
            var end = start
            while end < value.count, value[end] != UInt8(ascii: ",") { end += 1 }
            let element = UnsafeRawBufferPointer(rebasing: value[start..<end]).trimmingWhiteSpace
            if !element.isEmpty { try body(element) }
            start = end + 1
        }
    }

    /// CRLF as `readInteger`/`getInteger` read it (big-endian).
    static let crlf: UInt16 = 0x0D0A
}

/// What a head's fields say about its message's framing and its connection, noted field by
/// field (``note(name:value:)``) and judged once the head is read (``framing(version:)``):
/// `Content-Length` is digits only and appears once; `Transfer-Encoding` appears once, in
/// HTTP/1.1, ends in `chunked`, and never beside `Content-Length` (RFC 9112 §6.1: a chunked
/// body's end cannot be told from a length beside it, nor by an HTTP/1.0 recipient).
struct HTTP1FramingFields {
    enum Framing {
        /// Neither field: the message has no body (a request), or one until the connection
        /// closes (a response that may have one).
        case none
        case length(Int)
        case chunked
    }

    private(set) var contentLength: Int?
    private var transferEncodings = 0
    private var chunked = false
    /// `Connection` lists `close`, `keep-alive`, `upgrade`.
    private(set) var connectionClose = false
    private(set) var connectionKeepAlive = false
    private(set) var connectionUpgrade = false
    /// An `Upgrade` field is present.
    private(set) var upgradeField = false

    /// What the field `name: value` says, if anything (told by the name's length first: most
    /// fields have none of these lengths).
    mutating func note(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
        switch name.count {
        case 14 where HeaderName.equals(name, "content-length"):
            guard contentLength == nil else { throw HTTPParserError.unexpectedContentLength }
            guard let length = value.decimalValue else { throw HTTPParserError.invalidContentLength }
            contentLength = length
        case 17 where HeaderName.equals(name, "transfer-encoding"):
            transferEncodings += 1
            let last = value.lastIndex(of: UInt8(ascii: ",")).map { UnsafeRawBufferPointer(rebasing: value[($0 + 1)...]) } ?? value
            chunked = HeaderName.equals(last.trimmingWhiteSpace, "chunked")
        case 10 where HeaderName.equals(name, "connection"):
            HTTP1Syntax.forEachElement(ofList: value) { option in
                if HeaderName.equals(option, "close") {
                    connectionClose = true
                } else if HeaderName.equals(option, "keep-alive") {
                    connectionKeepAlive = true
                } else if HeaderName.equals(option, "upgrade") {
                    connectionUpgrade = true
                }
            }
        case 7 where HeaderName.equals(name, "upgrade"):
            upgradeField = true
        default:
            break
        }
    }

    /// How the message's body is framed, or the error for framing two parsers could read two
    /// ways.
    func framing(version: HTTPVersion) throws -> Framing {
        if transferEncodings > 0 {
            if contentLength != nil { throw HTTPParserError.unexpectedContentLength }
            if version == .http1_0 || transferEncodings > 1 || !chunked { throw HTTPParserError.invalidHeaderToken }
            return .chunked
        }
        return contentLength.map { .length($0) } ?? .none
    }

    /// Whether the connection stays open after the message: HTTP/1.1 unless `close`, HTTP/1.0
    /// only with `keep-alive` (RFC 9112 §9.3).
    func keepsAlive(version: HTTPVersion) -> Bool {
        version == .http1_0 ? connectionKeepAlive && !connectionClose : !connectionClose
    }
}

extension UInt8 {
    /// A `tchar` (RFC 9110 §5.6.2): what names and methods are made of. Looked up in a 128-bit
    /// set (bit n: byte n is one) rather than compared range by range: it runs for every byte
    /// of every field name.
    var isTokenByte: Bool {
        if self < 64 { return (0x03FF_6CFA_0000_0000 as UInt64) &>> UInt64(self) & 1 != 0 }
        if self < 128 { return (0x57FF_FFFF_C7FF_FFFE as UInt64) &>> UInt64(self - 64) & 1 != 0 }
        return false
    }

    /// A byte a field value may hold: visible ASCII, space, tab, obs-text (RFC 9110 §5.5).
    var isFieldValueByte: Bool {
        self == 0x09 || (self >= 0x20 && self != 0x7F)
    }

    var hexValue: Int? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(self - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(self - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(self - UInt8(ascii: "A") + 10)
        default: nil
        }
    }
}

extension UnsafeRawBufferPointer {
    var trimmingWhiteSpace: UnsafeRawBufferPointer {
        var start = 0
        var end = count
        while start < end, self[start] == 0x20 || self[start] == 0x09 { start += 1 }
        while end > start, self[end - 1] == 0x20 || self[end - 1] == 0x09 { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: self[start..<end])
    }

    /// Digits only, no sign or white space; nil past what an `Int` holds.
    var decimalValue: Int? {
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
