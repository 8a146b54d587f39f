import NIOCore
import NIOHPACK

/// An HTTP/2 request head as HTTP/1.1 bytes for the upstream: the pseudo-fields become the
/// request line and `host`, the rest are copied (HTTP/2 has no connection-specific fields).
enum HTTP2RequestBytes {
    static func make(_ fields: HPACKHeaders, body: ByteBuffer?, allocator: ByteBufferAllocator) -> ByteBuffer? {
        var method = "", path = "", authority = ""
        for field in fields {
            switch field.name {
            case ":method": method = field.value
            case ":path": path = field.value
            case ":authority": authority = field.value
            default: continue
            }
        }
        guard !method.isEmpty, !path.isEmpty else { return nil }
        var bytes = allocator.buffer(capacity: 256 + (body?.readableBytes ?? 0))
        bytes.writeString(method)
        bytes.writeStaticString(" ")
        bytes.writeString(path)
        bytes.writeStaticString(" HTTP/1.1\r\nhost: ")
        bytes.writeString(authority)
        bytes.writeStaticString("\r\n")
        // The body's length is written below, from the bytes that came.
        for field in fields where !field.name.hasPrefix(":") && field.name != "content-length" {
            bytes.writeString(field.name)
            bytes.writeStaticString(": ")
            bytes.writeString(field.value)
            bytes.writeStaticString("\r\n")
        }
        if var body {
            bytes.writeString("content-length: \(body.readableBytes)\r\n\r\n")
            bytes.writeBuffer(&body)
        } else {
            bytes.writeStaticString("\r\n")
        }
        return bytes
    }
}
