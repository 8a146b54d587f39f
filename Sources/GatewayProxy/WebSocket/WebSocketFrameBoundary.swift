/// Where the WebSocket frames in one direction of a tunnel begin and end, read from the
/// frames' headers alone (RFC 6455 §5.2): the payload is skipped by its length, never copied
/// or unmasked. The gateway forwards frames as bytes; it needs their boundaries only to put
/// a close frame of its own between two of them (``WebSocketTunnel``).
package struct WebSocketFrameBoundary: Equatable {
    private enum State: Equatable {
        /// Before a frame's first byte: a boundary.
        case start
        /// The first byte was read; the second (mask bit, 7-bit length) is next.
        case lengthByte
        /// Reading a 16- or 64-bit length, `remaining` bytes of it still to come.
        case extendedLength(remaining: Int, length: UInt64, masked: Bool)
        /// Reading the 4-byte masking key.
        case maskKey(remaining: Int, length: UInt64)
        case payload(remaining: UInt64)
    }

    private var state = State.start

    package init() {}

    /// Whether the bytes so far end exactly at a frame's end.
    package var isAtBoundary: Bool { state == .start }

    /// Reads `bytes` and returns how many it took: all of them, or with `stopAtBoundary` only
    /// those up to the first frame end (none if already at one).
    package mutating func scan(_ bytes: UnsafeRawBufferPointer, stopAtBoundary: Bool) -> Int {
        var index = 0
        while index < bytes.count {
            if stopAtBoundary && state == .start { return index }
            switch state {
            case .start:
                state = .lengthByte
                index += 1
            case .lengthByte:
                let byte = bytes[index]
                index += 1
                let masked = byte & 0x80 != 0
                switch byte & 0x7F {
                case 126: state = .extendedLength(remaining: 2, length: 0, masked: masked)
                case 127: state = .extendedLength(remaining: 8, length: 0, masked: masked)
                case let length: afterLength(UInt64(length), masked: masked)
                }
            case .extendedLength(let remaining, let length, let masked):
                let length = length << 8 | UInt64(bytes[index])
                index += 1
                if remaining > 1 {
                    state = .extendedLength(remaining: remaining - 1, length: length, masked: masked)
                } else {
                    afterLength(length, masked: masked)
                }
            case .maskKey(let remaining, let length):
                index += 1
                if remaining > 1 {
                    state = .maskKey(remaining: remaining - 1, length: length)
                } else {
                    state = length == 0 ? .start : .payload(remaining: length)
                }
            case .payload(let remaining):
                let taken = min(remaining, UInt64(bytes.count - index))
                index += Int(taken)
                state = taken == remaining ? .start : .payload(remaining: remaining - taken)
            }
        }
        return index
    }

    private mutating func afterLength(_ length: UInt64, masked: Bool) {
        if masked {
            state = .maskKey(remaining: 4, length: length)
        } else {
            state = length == 0 ? .start : .payload(remaining: length)
        }
    }
}
