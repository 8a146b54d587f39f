/// Lowercase hexadecimal, for ids and hashes.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    static func string(_ value: UInt64) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        var remaining = value
        for index in stride(from: 15, through: 0, by: -1) {
            bytes[index] = digits[Int(remaining & 0xF)]
            remaining >>= 4
        }
        return String(decoding: bytes, as: UTF8.self)
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
