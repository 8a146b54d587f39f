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
