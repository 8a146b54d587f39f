import NIOCore

/// The read buffers of a plain HTTP/1.1 client connection: one made for each read and freed
/// once the read is handled, so an idle connection holds none.
///
/// NIO keeps each channel's read buffer for reuse (`NIOPooledRecvBufferAllocator`) for the
/// channel's life, at the largest size it ever grew to: 2 KiB on every idle keep-alive
/// connection, 64 KiB on one that once carried an upload. This allocator names no size for the
/// pool to reuse a buffer at and always says the next may be larger, so each read gets a new
/// buffer, sized as NIO's adaptive allocator would size it. With one read per wake-up
/// (`maxMessagesPerRead` 1, set beside it) the pool stores only the connection's first buffer,
/// which is therefore small: the first read takes ``firstReadBytes``, the next wake-up the
/// rest (docs/DECISIONS.md, "Parked idle connections").
package struct TransientReadBuffers: RecvByteBufferAllocator {
    /// The first read's buffer, the one NIO keeps.
    package static let firstReadBytes = 16

    private var sizes = AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 2048, maximum: 65536)
    private var first = true

    package init() {}

    package func buffer(allocator: ByteBufferAllocator) -> ByteBuffer {
        allocator.buffer(capacity: first ? Self.firstReadBytes : sizes.nextBufferSize() ?? sizes.initial)
    }

    /// Always "may grow": told otherwise, the pool would read into the buffer it kept.
    package mutating func record(actualReadBytes: Int) -> Bool {
        if first {
            first = false
        } else {
            _ = sizes.record(actualReadBytes: actualReadBytes)
        }
        return true
    }
}
