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
