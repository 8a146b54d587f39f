import NIOCore

extension RedisCommand {
    /// Appends the command to `buffer` as Redis reads it: a RESP array of bulk strings.
    /// Written by the client rather than by hiredis's `redisFormatCommandArgv`, which needs a
    /// C array of pointers and a heap copy per command; replies are still parsed by hiredis.
    func encode(into buffer: inout ByteBuffer) {
        buffer.writeImmutableBuffer(encoded)
    }
}

/// Reads the arguments back out of an encoded command (the inverse of its encoding).
enum RESPArguments {
    static func decode(_ encoded: ByteBuffer) -> [[UInt8]]? {
        var buffer = encoded
        guard buffer.readInteger(as: UInt8.self) == UInt8(ascii: "*"), let count = readLength(&buffer) else { return nil }
        var arguments: [[UInt8]] = []
        arguments.reserveCapacity(count)
        for _ in 0..<count {
            guard buffer.readInteger(as: UInt8.self) == UInt8(ascii: "$"), let length = readLength(&buffer),
                let bytes = buffer.readBytes(length: length), buffer.readBytes(length: 2) == [0x0D, 0x0A]
            else { return nil }
            arguments.append(bytes)
        }
        return arguments
    }

    private static func readLength(_ buffer: inout ByteBuffer) -> Int? {
        guard let end = buffer.readableBytesView.firstIndex(of: 0x0D),
            let digits = buffer.readString(length: end - buffer.readerIndex), let length = Int(digits),
            buffer.readBytes(length: 2) == [0x0D, 0x0A]
        else { return nil }
        return length
    }
}

extension ByteBuffer {
    /// `$<length>\r\n<bytes>\r\n`.
    mutating func writeRESPBulkString(_ bytes: some Collection<UInt8>) {
        writeRESPLength(UInt8(ascii: "$"), bytes.count)
        writeBytes(bytes)
        writeStaticString("\r\n")
    }

    /// `$<length>\r\n<text>\r\n`, the text's UTF-8 copied at once.
    mutating func writeRESPBulkString(_ text: String) {
        writeRESPLength(UInt8(ascii: "$"), text.utf8.count)
        writeString(text)
        writeStaticString("\r\n")
    }

    /// `<kind><count>\r\n`, the line that opens an array or a bulk string.
    mutating func writeRESPLength(_ kind: UInt8, _ count: Int) {
        writeInteger(kind)
        // In decimal, digit by digit: no string made for the number.
        var divisor = 1
        while divisor <= count / 10 { divisor &*= 10 }
        var rest = count
        repeat {
            writeInteger(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest / divisor))
            rest %= divisor
            divisor /= 10
        } while divisor > 0
        writeStaticString("\r\n")
    }

    /// The bytes of `<kind><count>\r\n`.
    static func respLengthLine(_ count: Int) -> Int {
        var digits = 1
        var rest = count
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        return 1 + digits + 2
    }

    /// The bytes of a bulk string of `length` bytes: `$<length>\r\n<bytes>\r\n`.
    static func respBulkString(_ length: Int) -> Int {
        respLengthLine(length) + length + 2
    }
}
