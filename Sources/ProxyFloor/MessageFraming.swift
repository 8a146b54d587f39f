#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// Where each HTTP/1 message in a byte stream ends, found by scanning its head for
/// `Content-Length` and nothing else: offsets into the read buffer, no `String` and no header
/// collection. The byte floor's whole understanding of HTTP; a message framed any other way
/// (`Transfer-Encoding`) is refused, which the floor's benchmark traffic never sends.
struct MessageFraming {
    enum Step {
        /// Pass these bytes on: a whole head with as much of its body as has arrived, or more body.
        case forward(ByteBuffer)
        /// The head is not complete; keep the bytes and read more.
        case needMore
        case invalid
    }

    private var bodyRemaining = 0
    /// An incomplete head, kept until the rest of it arrives.
    private var held: ByteBuffer?

    /// Frames what one read brought, handing each slice that can be passed on to `forward`;
    /// false when the stream is not one the floor understands.
    mutating func read(_ read: ByteBuffer, forward: (ByteBuffer) -> Void) -> Bool {
        var bytes = read
        if var earlier = held {
            earlier.writeBuffer(&bytes)
            bytes = earlier
            held = nil
        }
        while bytes.readableBytes > 0 {
            switch next(from: &bytes) {
            case .forward(let slice): forward(slice)
            case .needMore:
                held = bytes
                return true
            case .invalid: return false
            }
        }
        return true
    }

    /// Takes the next slice of `buffer` that can be passed on.
    private mutating func next(from buffer: inout ByteBuffer) -> Step {
        if bodyRemaining > 0 {
            let length = min(bodyRemaining, buffer.readableBytes)
            bodyRemaining -= length
            return .forward(buffer.readSlice(length: length)!)
        }
        let scan = buffer.withUnsafeReadableBytes { Self.scanHead($0) }
        switch scan {
        case .incomplete: return .needMore
        case .invalid: return .invalid
        case .head(let headLength, let contentLength):
            let arrived = min(contentLength, buffer.readableBytes - headLength)
            bodyRemaining = contentLength - arrived
            return .forward(buffer.readSlice(length: headLength + arrived)!)
        }
    }

    enum Scan: Equatable {
        case incomplete
        case invalid
        case head(length: Int, contentLength: Int)
    }

    private static let contentLength = Array("content-length:".utf8)
    private static let transferEncoding = Array("transfer-encoding:".utf8)

    /// One pass over the head's lines; a field name matches when each byte ORed with 0x20 equals
    /// the lower-case name (`-` and `:` already have that bit).
    static func scanHead(_ bytes: UnsafeRawBufferPointer) -> Scan {
        var lineStart = 0
        var contentLength = 0
        var first = true
        while lineStart < bytes.count {
            guard let found = memchr(bytes.baseAddress! + lineStart, 0x0A, bytes.count - lineStart) else { return .incomplete }
            let newline = UnsafeRawPointer(found) - bytes.baseAddress!
            var lineEnd = newline
            if lineEnd > lineStart, bytes[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
            if lineEnd == lineStart {
                return first ? .invalid : .head(length: newline + 1, contentLength: contentLength)
            }
            if !first {
                if matches(Self.contentLength, bytes, at: lineStart, end: lineEnd) {
                    guard let value = digits(bytes, from: lineStart + Self.contentLength.count, to: lineEnd) else { return .invalid }
                    contentLength = value
                } else if matches(Self.transferEncoding, bytes, at: lineStart, end: lineEnd) {
                    return .invalid
                }
            }
            first = false
            lineStart = newline + 1
        }
        return .incomplete
    }

    /// Whether the bytes from `start` begin with `name` (lower-case), whatever their case.
    static func matches(_ name: [UInt8], _ bytes: UnsafeRawBufferPointer, at start: Int, end: Int) -> Bool {
        guard end - start >= name.count else { return false }
        for offset in 0..<name.count where bytes[start + offset] | 0x20 != name[offset] { return false }
        return true
    }

    private static func digits(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Int? {
        var index = start
        while index < end, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") { index += 1 }
        var value = 0
        var any = false
        while index < end, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            guard value < 1 << 40 else { return nil }
            any = true
            index += 1
        }
        while index < end, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") { index += 1 }
        return any && index == end ? value : nil
    }
}
