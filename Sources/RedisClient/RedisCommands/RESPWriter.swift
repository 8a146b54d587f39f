import NIOCore

/// Writes a command as Redis reads it (a RESP array of bulk strings) straight into raw memory,
/// in two passes over one description of its shape: the first measures it, the second fills
/// a buffer of exactly that size. Every Redis call of every request is encoded here, and
/// `ByteBuffer`'s checked writes, several per bulk string, cost more than the bytes.
struct RESPWriter {
    /// Nil while measuring.
    private let target: UnsafeMutableRawBufferPointer?
    /// Where the next byte goes (while measuring: how many came so far).
    private(set) var index = 0

    private init(target: UnsafeMutableRawBufferPointer?) {
        self.target = target
    }

    /// The bytes `write` describes, in a buffer of their exact size.
    static func encode(_ write: (inout RESPWriter) -> Void) -> ByteBuffer {
        var measure = RESPWriter(target: nil)
        write(&measure)
        var buffer = ByteBufferAllocator().buffer(capacity: measure.index)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: measure.index) { raw in
            var writer = RESPWriter(target: raw)
            write(&writer)
            precondition(writer.index == measure.index, "a RESP shape must write what it measured")
            return writer.index
        }
        return buffer
    }

    /// `*<count>\r\n`: an array of `count` bulk strings follows.
    mutating func array(_ count: Int) {
        line(UInt8(ascii: "*"), count)
    }

    /// `$<length>\r\n<text>\r\n`.
    mutating func bulk(_ text: String) {
        line(UInt8(ascii: "$"), text.utf8.count)
        verbatim(text.utf8)
        crlf()
    }

    /// `$<length>\r\n<bytes>\r\n`, binary safe.
    mutating func bulk(_ bytes: some Collection<UInt8>) {
        line(UInt8(ascii: "$"), bytes.count)
        verbatim(bytes)
        crlf()
    }

    /// A number as a bulk string (a key count), with no string made for it.
    mutating func bulk(decimal value: Int) {
        line(UInt8(ascii: "$"), Self.digits(value))
        number(value)
        crlf()
    }

    /// Bytes as they are (a part of a command already encoded).
    mutating func verbatim(_ bytes: some Collection<UInt8>) {
        let count = bytes.count
        if let target {
            let copied = bytes.withContiguousStorageIfAvailable { source in
                UnsafeMutableRawBufferPointer(rebasing: target[index..<(index + count)]).copyMemory(from: UnsafeRawBufferPointer(source))
            }
            if copied == nil {
                var position = index
                for byte in bytes {
                    target[position] = byte
                    position += 1
                }
            }
        }
        index += count
    }

    /// `<kind><count>\r\n`, the line that opens an array or a bulk string.
    private mutating func line(_ kind: UInt8, _ count: Int) {
        target?[index] = kind
        index += 1
        number(count)
        crlf()
    }

    private mutating func crlf() {
        if let target {
            target[index] = 0x0D
            target[index + 1] = 0x0A
        }
        index += 2
    }

    /// `value` in decimal, written from its last digit back.
    private mutating func number(_ value: Int) {
        let digits = Self.digits(value)
        if let target {
            var rest = value
            for position in stride(from: index + digits - 1, through: index, by: -1) {
                target[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            }
        }
        index += digits
    }

    private static func digits(_ value: Int) -> Int {
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        return digits
    }
}
