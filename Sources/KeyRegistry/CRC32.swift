/// CRC-32 (IEEE 802.3, the zlib polynomial), for the API key checksum.
///
/// A checksum, not a MAC: it lets the gateway (and a partner's own code, or a secret scanner)
/// reject a mistyped or truncated key without a Redis lookup. It guards nothing against an
/// attacker, who can compute it too; the 256-bit secret does that.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 {
            value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1
        }
        return value
    }

    static func checksum<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
        }
        return crc ^ 0xFFFF_FFFF
    }
}
