/// Lowercase hexadecimal, for ids and hashes.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `high` then `low`, 32 characters written straight into the string's storage (this
    /// makes every request id, so it avoids the intermediate arrays).
    static func string(_ high: UInt64, _ low: UInt64) -> String {
        String(unsafeUninitializedCapacity: 32) { buffer in
            write(high, into: buffer, at: 0)
            write(low, into: buffer, at: 16)
            return 32
        }
    }

    private static func write(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        var remaining = value
        for index in stride(from: offset + 15, through: offset, by: -1) {
            buffer[index] = digits[Int(remaining & 0xF)]
            remaining >>= 4
        }
    }

    static func string<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
