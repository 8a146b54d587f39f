/// Unguessable identifiers as lowercase hex: partner and key ids, user ids, token ids, refresh
/// token families and secrets.
///
/// The bytes come from `SystemRandomNumberGenerator`, the kernel's CSPRNG (getrandom on
/// Linux), which is what makes these values unguessable; never swap in a seeded generator.
public enum RandomHex {
    /// `byteCount` random bytes as `2 * byteCount` hex characters.
    public static func string(byteCount: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount + 8)
        while bytes.count < byteCount {
            withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
        }
        return Hex.encode(bytes, count: byteCount)
    }
}
