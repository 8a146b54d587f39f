import GatewayEdge
import NIOCore
import NIOHTTP1

/// A request head for an upstream, written as HTTP/1.1 bytes as its fields are added, then
/// sent as it is (``UpstreamResponseHandler/send(_:to:timeout:)``).
///
/// Written as bytes: the fields are decided before (``ForwardedHeaders``), from a request NIO's
/// parser already validated and the gateway's own values, so no encoder walks them a second time.
package struct UpstreamRequestHead {
    package let method: HTTPMethod
    /// How the body is delimited, set by ``end(framing:)``.
    package private(set) var framing = UpstreamRequestFraming.bodiless
    /// Whether body chunks follow the head; when not, the request ended with its head.
    package private(set) var hasBody = false
    /// The request line and the fields so far; the whole head (and the end of an empty
    /// chunked body) once ended.
    package private(set) var bytes: ByteBuffer

    /// The request line; `capacity` holds a typical head, so that the buffer seldom grows.
    package init(method: HTTPMethod, target: String, allocator: ByteBufferAllocator, capacity: Int = 1024) {
        self.method = method
        bytes = allocator.buffer(capacity: capacity)
        bytes.writeString(method.rawValue)
        bytes.writeStaticString(" ")
        bytes.writeString(target)
        bytes.writeStaticString(" HTTP/1.1\r\n")
    }

    /// Adds the field `name: value` (``ByteBuffer/writeHeaderField(name:value:)``).
    package mutating func add(name: String, value: String) {
        bytes.writeHeaderField(name: name, value: value)
    }

    /// Adds a client's field line as it came (`name: value` through its CRLF, bytes of a
    /// ``ClientRequestHead``): copied, not written again from `String`s.
    package mutating func add(line: UnsafeRawBufferPointer) {
        bytes.writeBytes(line)
    }

    /// Ends the head: the framing's field (the only one the upstream gets: the client's never
    /// pass, ``UpstreamRequestFraming``) and the blank line.
    package mutating func end(framing: UpstreamRequestFraming) {
        self.framing = framing
        switch framing {
        case .bodiless, .length(0): hasBody = false
        case .length, .chunked: hasBody = true
        }
        framing.writeField(into: &bytes)
        bytes.writeStaticString("\r\n")
    }
}
