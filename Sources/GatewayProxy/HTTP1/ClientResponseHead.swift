import GatewayEdge
import GatewayPrimitives
import NIOCore
import NIOHTTP1

/// A proxied response's head for an HTTP/1.1 client, written as bytes: the status line, the
/// fields of its ``ProxyResponseHead``, the framing field, the blank line. ``HTTP1ConnectionHandler`` writes
/// it below NIO's `HTTPResponseEncoder`.
///
/// Written as bytes: an upstream's field lines were checked by the gateway's parser
/// (``HTTP1ResponseParser``) and are copied as they came, line by line, from its head's bytes;
/// the fields the gateway made are written from their strings. No `HTTPHeaders` is built and no
/// encoder walks them a second time (as for ``UpstreamRequestHead``).
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
        // The fields are written into the caller's storage, not a copy of it: the buffer is
        // swapped in and back (`ByteBuffer()` is a shared empty one, nothing is allocated).
        var fields = Fields(bytes: ByteBuffer(), mayHaveBody: mayHaveBody, closing: closing)
        swap(&bytes, &fields.bytes)
        head.write(into: &fields)
        swap(&bytes, &fields.bytes)
        if closing { bytes.writeHeaderField(name: "connection", value: "close") }
        if mayHaveBody && !fields.declaresLength {
            // Also in the response to a `HEAD`: it says how a `GET` would have been answered.
            bytes.writeHeaderField(name: "transfer-encoding", value: "chunked")
        }
        bytes.writeStaticString("\r\n")
        if !mayHaveBody || requestMethod == .HEAD { return .bodiless }
        return fields.declaresLength ? .asIs : .chunked
    }

    /// The field lines of the head, and whether one of them declared the body's length.
    private struct Fields: ResponseFieldWriter {
        var bytes: ByteBuffer
        let mayHaveBody: Bool
        let closing: Bool
        var declaresLength = false

        mutating func pass(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, line: UnsafeRawBufferPointer) {
            guard keeps(name) else { return }
            bytes.writeBytes(line)
        }

        mutating func add(name: String, value: String) {
            var name = name
            guard name.withUTF8({ keeps(UnsafeRawBufferPointer($0)) }) else { return }
            bytes.writeHeaderField(name: name, value: value)
        }

        /// Whether a field named `name` goes into the head: not a length where no body may
        /// follow, nor a `Connection` when the head says its own.
        private mutating func keeps(_ name: UnsafeRawBufferPointer) -> Bool {
            if HeaderName.equals(name, "content-length") {
                guard mayHaveBody else { return false }
                declaresLength = true
            }
            return !(closing && HeaderName.equals(name, "connection"))
        }
    }
}
