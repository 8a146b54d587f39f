import GatewayEdge
import NIOCore
import NIOHTTP1

/// How a proxied response's body is delimited on an HTTP/1.1 client connection (RFC 9112 §6),
/// and the bytes that delimit it: the framing rules of the client's response, in one place.
///
/// They are the rules of NIO's `HTTPResponseEncoder`, which frames the gateway's other responses:
/// a `Content-Length` passes and the body goes as it comes;
/// a response that may have a body but declares no length is sent chunked (the upstream's own
/// chunk sizes are not kept, its trailers are); the response to a `HEAD` request, and a `1xx`,
/// `204` or `304`, carries no body.
package enum ClientResponseFraming: Equatable {
    /// No body goes to the client.
    case bodiless
    /// The body goes as it is, its length given by `Content-Length`.
    case asIs
    /// `Transfer-Encoding: chunked`.
    case chunked

    /// Hands `write` the bytes of one body chunk.
    package func frame(_ chunk: ByteBuffer, allocator: ByteBufferAllocator, write: (ByteBuffer) -> Void) {
        switch self {
        case .bodiless: break
        case .asIs: write(chunk)
        case .chunked: ChunkedBody.frame(chunk, allocator: allocator, write: write)
        }
    }

    /// The bytes that end the body (the last chunk and the trailers), or nil when nothing does.
    package func end(trailers: HTTPHeaders?, allocator: ByteBufferAllocator) -> ByteBuffer? {
        self == .chunked ? ChunkedBody.end(trailers: trailers, allocator: allocator) : nil
    }
}
