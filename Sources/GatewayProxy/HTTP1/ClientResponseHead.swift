import GatewayEdge
import GatewayPrimitives
import NIOCore
import NIOHTTP1

/// A proxied response's head for an HTTP/1.1 client, written as bytes: the status line, the
/// fields of its ``ProxyResponseHead``, the framing field, the blank line. ``HTTP1ConnectionHandler`` writes
/// it below NIO's `HTTPResponseEncoder`.
///
/// Written as bytes: the fields were already validated by NIO's parser or made by the gateway,
/// so no `HTTPHeaders` is built and no encoder walks them a second time (as for
/// ``UpstreamRequestHead``).
package enum ClientResponseHead {
    /// Writes `head` into `bytes` (after what they hold) and returns how the body that follows
    /// is delimited. `requestMethod` is the method of the request answered (a `HEAD` answer has
    /// no body). The caller passes the same buffer, cleared, for each response on a connection:
    /// once the socket has let go of the last head's bytes, the next head is written into the
    /// same storage rather than a new buffer. `closing`: the response is the connection's last
    /// (the listener drains), and says `Connection: close` in place of any `Connection` field.
    package static func write(
        _ head: ProxyResponseHead, requestMethod: HTTPMethod, closing: Bool = false, into bytes: inout ByteBuffer
    ) -> ClientResponseFraming {
        if head.status == .ok {
            bytes.writeStaticString("HTTP/1.1 200 OK\r\n")
        } else {
            bytes.writeStaticString("HTTP/1.1 ")
            bytes.writeString(String(head.status.code))
            bytes.writeStaticString(" ")
            bytes.writeString(head.status.reasonPhrase)
            bytes.writeStaticString("\r\n")
        }
        // The forwarded fields never hold `Transfer-Encoding` (hop-by-hop), so only
        // `Content-Length` decides; a status without a body drops it, as NIO's encoder does.
        let mayHaveBody = head.status.mayHaveResponseBody
        var declaresLength = false
        head.forEachField { name, value in
            if HeaderName.equals(name, "content-length") {
                guard mayHaveBody else { return }
                declaresLength = true
            }
            if closing, HeaderName.equals(name, "connection") { return }
            bytes.writeHeaderField(name: name, value: value)
        }
        if closing { bytes.writeHeaderField(name: "connection", value: "close") }
        if mayHaveBody && !declaresLength {
            // Also in the response to a `HEAD`: it says how a `GET` would have been answered.
            bytes.writeHeaderField(name: "transfer-encoding", value: "chunked")
        }
        bytes.writeStaticString("\r\n")
        if !mayHaveBody || requestMethod == .HEAD { return .bodiless }
        return declaresLength ? .asIs : .chunked
    }
}
