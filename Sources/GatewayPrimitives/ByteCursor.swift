/// Bytes written through a pointer into space sized beforehand: how the hand-written JSON
/// (``JSONText``) reaches its buffer with one copy per field, where appending byte by byte to
/// an array checks the array's uniqueness and capacity for every byte.
public struct ByteCursor: ~Copyable {
    @usableFromInline let space: UnsafeMutableBufferPointer<UInt8>
    /// The bytes written so far.
    @usableFromInline var written: Int
    public var count: Int { written }

    /// Runs `write` with a cursor over `capacity` bytes of temporary space, then appends what
    /// it wrote to `bytes`. Writing more than `capacity` bytes stops the process rather than
    /// write past the space (a compare per write, against a miscounted size corrupting memory).
    @inlinable @inline(__always)
    public static func append(to bytes: inout [UInt8], capacity: Int, _ write: (inout ByteCursor) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { space in
            var cursor = ByteCursor(space: space)
            write(&cursor)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: space[..<cursor.count]))
        }
    }

    @usableFromInline init(space: UnsafeMutableBufferPointer<UInt8>) {
        self.space = space
        written = 0
    }

    @inlinable
    public mutating func write(_ byte: UInt8) {
        precondition(count < space.count, "ByteCursor: more bytes than its capacity")
        space[count] = byte
        written += 1
    }

    @inlinable
    public mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        precondition(count + bytes.count <= space.count, "ByteCursor: more bytes than its capacity")
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        (space.baseAddress! + count).update(from: source, count: bytes.count)
        written += bytes.count
    }

    @inlinable
    public mutating func write(_ text: StaticString) {
        text.withUTF8Buffer { write($0) }
    }

    /// `value` in decimal with exactly `width` digits (leading zeros), for timestamps.
    @inlinable
    public mutating func writeDigits(_ value: some BinaryInteger, width: Int) {
        precondition(count + width <= space.count, "ByteCursor: more bytes than its capacity")
        var rest = value
        var index = count + width
        while index > count {
            index -= 1
            space[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        written += width
    }
}
