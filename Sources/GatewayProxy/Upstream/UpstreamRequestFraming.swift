import GatewayEdge
import NIOCore
import NIOHTTP1

/// How a proxied request's body is delimited on its upstream connection (RFC 9112 §6), and
/// the bytes that delimit it: the framing rules of the upstream request, in one place.
///
/// The gateway always writes the framing itself, from what its parser measured (NIO's HTTP/1
/// parser, or swift-nio-http2, both of which hold a body to its declared length): the client's
/// `Content-Length` and `Transfer-Encoding` fields are never forwarded (``ForwardedHeaders``).
/// A field that went along as the client wrote it could be removed (`Connection:
/// content-length`) or repeated on the way, and an upstream reading a body of another length
/// than the gateway's reads the rest as a request of its own: request smuggling.
///
/// A chunked body stays chunked (re-chunked as it is read: the client's chunk sizes are not
/// kept). A `POST`, `PUT` or `PATCH` without a body goes with `Content-Length: 0`, as RFC 9110
/// §8.6 asks of a request whose method defines a meaning for content.
package enum UpstreamRequestFraming: Equatable {
    /// No body and no framing field.
    case bodiless
    /// `Content-Length: n`.
    case length(Int)
    /// `Transfer-Encoding: chunked`.
    case chunked

    /// The framing of a request with `body` and `method`.
    package static func of(_ body: ProxyEngine.Request.Body, method: HTTPMethod) -> Self {
        switch body {
        case .chunked:
            return .chunked
        case .length(let length):
            return .length(length)
        case .none:
            switch method {
            case .POST, .PUT, .PATCH: return .length(0)
            default: return .bodiless
            }
        }
    }

    /// Writes the field the head carries for this framing, if any, into `head`.
    package func writeField(into bytes: inout ByteBuffer) {
        switch self {
        case .bodiless:
            return
        case .length(let length):
            bytes.writeStaticString("Content-Length: ")
            bytes.writeString(String(length))
            bytes.writeStaticString("\r\n")
        case .chunked:
            bytes.writeStaticString("Transfer-Encoding: chunked\r\n")
        }
    }

    /// Hands `write` the bytes of one body chunk: the chunk itself, or framed as a chunk
    /// (``ChunkedBody``).
    package func frame(_ chunk: ByteBuffer, allocator: ByteBufferAllocator, write: (ByteBuffer) -> Void) {
        guard self == .chunked else {
            write(chunk)
            return
        }
        ChunkedBody.frame(chunk, allocator: allocator, write: write)
    }

    /// The bytes that end the body (the last chunk, no trailers), or nil when nothing does.
    package var end: ByteBuffer? {
        self == .chunked ? ChunkedBody.lastChunk : nil
    }
}
