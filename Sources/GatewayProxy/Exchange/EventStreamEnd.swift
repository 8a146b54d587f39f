import GatewayEdge
import GatewayPrimitives
import NIOCore

/// Where the events of a proxied event stream (`text/event-stream`, server-sent events) end,
/// from the bytes passed to the client: an event ends at a blank line, two line ends in a row
/// (`LF LF`, `CR CR` or `CRLF CRLF`). A stream cut inside an event loses that event (an
/// `EventSource` drops an unfinished one), so a drain ends a stream only here.
struct EventStreamEnd {
    /// The last four bytes passed, the latest in the lowest byte.
    private var lastBytes: UInt32 = 0
    private var passedAny = false

    /// Whether `head` says its body is an event stream (its first `Content-Type`, whatever its case).
    static func isEventStream(_ head: UpstreamResponseHead) -> Bool {
        var type: Bool?
        head.forEachField { field in
            if type == nil, HeaderName.equals(field.name, "content-type") { type = HeaderName.hasPrefix(field.value, "text/event-stream") }
        }
        return type ?? false
    }

    mutating func passed(_ chunk: ByteBuffer) {
        guard chunk.readableBytes > 0 else { return }
        passedAny = true
        for byte in chunk.readableBytesView.suffix(4) { lastBytes = lastBytes << 8 | UInt32(byte) }
    }

    /// Whether what passed ends an event (or nothing passed yet).
    var atEventEnd: Bool {
        guard passedAny else { return true }
        return lastBytes & 0xFFFF == 0x0A0A || lastBytes & 0xFFFF == 0x0D0D || lastBytes == 0x0D0A_0D0A
    }
}
