import NIOCore

extension RedisCommand {
    /// Appends the command to `buffer` as Redis reads it: a RESP array of bulk strings.
    /// Written here rather than by hiredis's `redisFormatCommandArgv`, which needs a C array
    /// of pointers and a heap copy per command; replies are still parsed by hiredis.
    func encode(into buffer: inout ByteBuffer) {
        buffer.writeRESPLength(UInt8(ascii: "*"), arguments.count)
        for argument in arguments {
            buffer.writeRESPBulkString(argument)
        }
    }
}

extension ByteBuffer {
    /// `$<length>\r\n<bytes>\r\n`.
    mutating func writeRESPBulkString(_ bytes: some Collection<UInt8>) {
        writeRESPLength(UInt8(ascii: "$"), bytes.count)
        writeBytes(bytes)
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
}
