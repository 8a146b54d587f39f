import NIOCore
import NIOHTTP1

/// A request head for an upstream, written as HTTP/1.1 bytes as its fields are added, then
/// sent as it is (``UpstreamResponseHandler/send(_:to:timeout:)``).
///
/// Why bytes: the head used to be NIO's `HTTPRequestHead`, an array of string pairs that NIO's
/// `HTTPRequestEncoder` walked a second time on the upstream pipeline to write, with its own
/// framing pass; on the bearer route that was a measurable share of a request's CPU. What the
/// fields are is decided before (``ForwardedHeaders``), from a request NIO's parser already
/// validated and the gateway's own values, so they are written without another check.
struct UpstreamRequestHead {
    let method: HTTPMethod
    /// How the body is delimited, set by ``end(framing:hasBody:)``.
    private(set) var framing = UpstreamRequestFraming.asIs
    /// Whether body chunks follow the head; when not, the request ended with its head.
    private(set) var hasBody = false
    /// The request line and the fields so far; the whole head (and the end of an empty
    /// chunked body) once ended.
    private(set) var bytes: ByteBuffer

    /// The request line; `capacity` holds a typical head, so that the buffer seldom grows.
    init(method: HTTPMethod, target: String, allocator: ByteBufferAllocator, capacity: Int = 1024) {
        self.method = method
        bytes = allocator.buffer(capacity: capacity)
        bytes.writeString(method.rawValue)
        bytes.writeStaticString(" ")
        bytes.writeString(target)
        bytes.writeStaticString(" HTTP/1.1\r\n")
    }

    /// Writes `name: value` and its line end in one write to the buffer: four writes per field
    /// (each checking the buffer's capacity and that it is not shared) showed in profiles.
    mutating func add(name: String, value: String) {
        let copied = name.utf8.withContiguousStorageIfAvailable { name in
            value.utf8.withContiguousStorageIfAvailable { value in
                bytes.writeWithUnsafeMutableBytes(minimumWritableBytes: name.count + value.count + 4) { target in
                    var end = Self.copy(UnsafeRawBufferPointer(name), into: target, at: 0)
                    end = Self.copy(Self.bytes(of: ": "), into: target, at: end)
                    end = Self.copy(UnsafeRawBufferPointer(value), into: target, at: end)
                    return Self.copy(Self.bytes(of: "\r\n"), into: target, at: end)
                }
            }
        }
        guard case .some(.some) = copied else {
            // Not contiguous UTF-8 (never for strings NIO parsed or the gateway made).
            bytes.writeString(name)
            bytes.writeStaticString(": ")
            bytes.writeString(value)
            bytes.writeStaticString("\r\n")
            return
        }
    }

    private static func bytes(of text: StaticString) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
    }

    /// Copies `source` into `target` at `offset`; returns where it ended.
    private static func copy(_ source: UnsafeRawBufferPointer, into target: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        UnsafeMutableRawBufferPointer(rebasing: target[offset..<(offset + source.count)]).copyMemory(from: source)
        return offset + source.count
    }

    /// Ends the head: the framing's field, the blank line, and when the request has no body
    /// but is framed chunked, the empty body's last chunk (the request then ends here too).
    mutating func end(framing: UpstreamRequestFraming, hasBody: Bool) {
        self.framing = framing
        self.hasBody = hasBody
        if let field = framing.field { add(name: field.name, value: field.value) }
        bytes.writeStaticString("\r\n")
        if !hasBody, var end = framing.end { bytes.writeBuffer(&end) }
    }
}
