import NIOCore

extension ByteBuffer {
    /// Writes the HTTP/1.1 field line `name: value` and its line end in one write to the
    /// buffer, so the buffer's capacity and uniqueness are checked once per field, not four
    /// times. Both heads the gateway writes as bytes use it: the upstream's request
    /// (``UpstreamRequestHead``) and the client's response (``ClientResponseHead``).
    package mutating func writeHeaderField(name: String, value: String) {
        let copied = name.utf8.withContiguousStorageIfAvailable { name in
            value.utf8.withContiguousStorageIfAvailable { value in
                writeWithUnsafeMutableBytes(minimumWritableBytes: name.count + value.count + 4) { target in
                    var end = Self.copy(UnsafeRawBufferPointer(name), into: target, at: 0)
                    end = Self.copy(Self.bytes(of: ": "), into: target, at: end)
                    end = Self.copy(UnsafeRawBufferPointer(value), into: target, at: end)
                    return Self.copy(Self.bytes(of: "\r\n"), into: target, at: end)
                }
            }
        }
        guard case .some(.some) = copied else {
            // Not contiguous UTF-8 (never for strings NIO parsed or the gateway made).
            writeString(name)
            writeStaticString(": ")
            writeString(value)
            writeStaticString("\r\n")
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
}
