import NIOCore
import NIOHTTP1

/// How a proxied request's body is delimited on its upstream connection (RFC 9112 §6), and
/// the bytes that delimit it: the framing rules of the upstream request, in one place.
///
/// The client's own framing is kept: a `Content-Length` passes (the body goes as it came), a
/// chunked body stays chunked (re-chunked as it is read: the client's chunk sizes are not
/// kept). A `POST`, `PUT` or `PATCH` without a body or a length goes as an empty chunked body,
/// as NIO's HTTP/1 client encoder sent it before the gateway wrote heads itself.
enum UpstreamRequestFraming: Equatable {
    /// No body, or one whose length the client's `Content-Length` gives.
    case asIs
    /// `Transfer-Encoding: chunked`.
    case chunked

    /// The framing of a request with `body` and `method`; `declaresLength` says whether the
    /// client sent a `Content-Length` (asked only for a body-less `POST`, `PUT` or `PATCH`).
    static func of(_ body: ProxyEngine.Request.Body, method: HTTPMethod, declaresLength: () -> Bool) -> Self {
        switch body {
        case .chunked:
            return .chunked
        case .length:
            return .asIs
        case .none:
            switch method {
            case .POST, .PUT, .PATCH: return declaresLength() ? .asIs : .chunked
            default: return .asIs
            }
        }
    }

    /// The field the head carries for this framing, if any (the client's `Content-Length` is
    /// already among the forwarded fields).
    var field: (name: String, value: String)? {
        self == .chunked ? ("Transfer-Encoding", "chunked") : nil
    }

    /// Hands `write` the bytes of one body chunk: the chunk itself, or framed as a chunk
    /// (``ChunkedBody``).
    func frame(_ chunk: ByteBuffer, allocator: ByteBufferAllocator, write: (ByteBuffer) -> Void) {
        guard self == .chunked else {
            write(chunk)
            return
        }
        ChunkedBody.frame(chunk, allocator: allocator, write: write)
    }

    /// The bytes that end the body (the last chunk, no trailers), or nil when nothing does.
    var end: ByteBuffer? {
        self == .chunked ? ChunkedBody.lastChunk : nil
    }
}
