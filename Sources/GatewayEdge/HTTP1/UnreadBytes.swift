import NIOCore

/// The bytes of a part not yet whole, held from one read to the next by a handler that parses
/// its connection's bytes itself, with no `ByteToMessageHandler` in front: the client's
/// requests (``HTTP1RequestParser``) and an upstream's responses (``HTTP1ResponseParser``).
package struct UnreadBytes {
    /// What is held; nil when the last read ended where a part did.
    package private(set) var held: ByteBuffer?

    package init() {}

    /// Lets go of what is held and returns it.
    package mutating func take() -> ByteBuffer? {
        held.take()
    }

    /// What is held with `read` after it, to parse as one buffer; nothing is held after.
    package mutating func take(appending read: ByteBuffer) -> ByteBuffer {
        guard var bytes = held.take() else { return read }
        var read = read
        bytes.writeBuffer(&read)
        return bytes
    }

    /// Holds what is left to read of `bytes`, nothing when all of it was read. Without the
    /// bytes already read: the next read is appended to this buffer, which would otherwise grow
    /// by every read of a long stream whose reads end mid-part.
    package mutating func keep(_ bytes: ByteBuffer) {
        guard bytes.readableBytes > 0 else { return }
        var bytes = bytes
        bytes.discardReadBytes()
        held = bytes
    }
}
