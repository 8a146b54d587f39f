/// Lowercase hexadecimal, written straight into one buffer: key hashes are formatted on every
/// partner request, and formatting each byte as its own String cost more than the SHA-256.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    static func string<Bytes: Sequence<UInt8>>(_ bytes: Bytes, count: Int) -> String {
        String(unsafeUninitializedCapacity: count * 2) { buffer in
            var index = 0
            for byte in bytes {
                buffer[index] = digits[Int(byte >> 4)]
                buffer[index + 1] = digits[Int(byte & 0x0F)]
                index += 2
            }
            return index
        }
    }
}
