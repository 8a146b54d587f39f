import NIOCore
import NIOHTTP1

/// HTTP/1.1's chunked transfer coding (RFC 9112 §7.1) as the gateway writes it itself, in one
/// place for both directions: a request body re-chunked for its upstream
/// (``UpstreamRequestFraming``) and a response body re-chunked for the client
/// (``ClientResponseFraming``). The sizes of the chunks read are not kept, only their bytes.
package enum ChunkedBody {
    /// Hands `write` one chunk's bytes: its size line, the chunk and the closing CRLF. An empty
    /// chunk writes nothing (chunked, it would end the body).
    package static func frame(_ chunk: ByteBuffer, allocator: ByteBufferAllocator, write: (ByteBuffer) -> Void) {
        guard chunk.readableBytes > 0 else { return }
        var sizeLine = allocator.buffer(capacity: 18)
        sizeLine.writeString(String(chunk.readableBytes, radix: 16))
        sizeLine.writeStaticString("\r\n")
        write(sizeLine)
        write(chunk)
        write(crlf)
    }

    /// The bytes that end a body: the last chunk, then the trailer fields if there are any,
    /// then the blank line.
    package static func end(trailers: HTTPHeaders?, allocator: ByteBufferAllocator) -> ByteBuffer {
        guard let trailers, !trailers.isEmpty else { return lastChunk }
        var bytes = allocator.buffer(capacity: 256)
        bytes.writeStaticString("0\r\n")
        for (name, value) in trailers { bytes.writeHeaderField(name: name, value: value) }
        bytes.writeStaticString("\r\n")
        return bytes
    }

    package static let lastChunk = ByteBuffer(staticString: "0\r\n\r\n")
    private static let crlf = ByteBuffer(staticString: "\r\n")
}

extension ChunkedBody {
    /// Reads a chunked body (RFC 9112 §7.1) from the bytes after its head, for both of the
    /// gateway's parsers: chunk sizes are hex without sign or white space (at most 15 digits,
    /// more would overflow and no body is that large), extensions are ignored but must not hide
    /// a line break, each chunk's data ends in CRLF, and the trailer section is limited like a
    /// head (`headerOverflow`).
    struct Decoder {
        typealias Part = HTTP1Body.Part

        private enum State {
            case size
            case data(remaining: Int)
            /// The CRLF after a chunk's data.
            case dataEnd
            case trailers(searched: Int)
        }

        private var state = State.size
        private let maxTrailerBytes: Int

        /// The longest chunk-size line (its extensions included) before it is refused.
        private static let maxSizeLineBytes = 4096

        init(maxTrailerBytes: Int) {
            self.maxTrailerBytes = maxTrailerBytes
        }

        /// The next part `buffer` holds, consumed from it, or nil when more bytes are needed.
        mutating func next(_ buffer: inout ByteBuffer) throws -> Part? {
            while true {
                switch state {
                case .size:
                    guard let size = try sizeLine(&buffer) else { return nil }
                    state = size == 0 ? .trailers(searched: 0) : .data(remaining: size)
                case .data(let remaining):
                    guard let (slice, left) = HTTP1Syntax.slice(&buffer, upTo: remaining) else { return nil }
                    state = left == 0 ? .dataEnd : .data(remaining: left)
                    return .data(slice)
                case .dataEnd:
                    guard buffer.readableBytes >= 2 else { return nil }
                    guard buffer.readInteger(as: UInt16.self) == HTTP1Syntax.crlf else { throw HTTPParserError.invalidChunkSize }
                    state = .size
                case .trailers(let searched):
                    return try trailers(&buffer, searched: searched)
                }
            }
        }

        /// A chunk's size, its line consumed; nil until the line has arrived.
        private func sizeLine(_ buffer: inout ByteBuffer) throws -> Int? {
            let line: (length: Int, size: Int)? = try buffer.withUnsafeReadableBytes { bytes in
                guard let lf = bytes.prefix(Self.maxSizeLineBytes).firstIndex(of: 0x0A) else {
                    if bytes.count >= Self.maxSizeLineBytes { throw HTTPParserError.invalidChunkSize }
                    return nil
                }
                guard lf > 0, bytes[lf - 1] == 0x0D else { throw HTTPParserError.lfExpected }
                var index = 0
                var size = 0
                while index < lf - 1, let digit = bytes[index].hexValue {
                    guard index < 15 else { throw HTTPParserError.invalidChunkSize }
                    size = size << 4 | digit
                    index += 1
                }
                guard index > 0 else { throw HTTPParserError.invalidChunkSize }
                if index < lf - 1 {
                    while bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
                    guard bytes[index] == UInt8(ascii: ";") else { throw HTTPParserError.invalidChunkSize }
                    for byte in bytes[index..<(lf - 1)] where !byte.isFieldValueByte { throw HTTPParserError.invalidChunkSize }
                }
                return (lf + 1, size)
            }
            guard let line else { return nil }
            buffer.moveReaderIndex(forwardBy: line.length)
            return line.size
        }

        private mutating func trailers(_ buffer: inout ByteBuffer, searched: Int) throws -> Part? {
            guard buffer.readableBytes >= 2 else { return nil }
            if searched == 0, buffer.getInteger(at: buffer.readerIndex, as: UInt16.self) == HTTP1Syntax.crlf {
                buffer.moveReaderIndex(forwardBy: 2)
                state = .size
                return .end(nil)
            }
            guard let length = try HTTP1Syntax.headLength(buffer, searched: searched, maxHeadBytes: maxTrailerBytes) else {
                state = .trailers(searched: HTTP1Syntax.searched(buffer))
                return nil
            }
            var fields: [(String, String)] = []
            try buffer.withUnsafeReadableBytes { bytes in
                let section = UnsafeRawBufferPointer(rebasing: bytes[..<length])
                try HTTP1Syntax.forEachFieldLine(section, from: 0) { name, value, _ in
                    fields.append((String(decoding: UnsafeRawBufferPointer(rebasing: section[name]), as: UTF8.self), String(decoding: UnsafeRawBufferPointer(rebasing: section[value]), as: UTF8.self)))
                }
            }
            buffer.moveReaderIndex(forwardBy: length)
            state = .size
            return .end(HTTPHeaders(fields))
        }
    }
}
