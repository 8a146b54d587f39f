/// Lowercase hex encoding and random hex strings.
///
/// Hex (not base64url) is used for everything this module generates by itself because the
/// values travel through Redis keys, logs (family ids only) and JSON, where a fixed
/// `[0-9a-f]` alphabet needs no escaping and is trivial to validate strictly. DriverSessions
/// uses it too (`package` access), for user ids and phone digests.
package enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Lowercase hex of `bytes`, two characters per byte.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var ascii: [UInt8] = []
        ascii.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            ascii.append(digits[Int(byte >> 4)])
            ascii.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: ascii, as: UTF8.self)
    }

    /// `byteCount` bytes from the operating system's CSPRNG, as `2 * byteCount` hex characters.
    ///
    /// `SystemRandomNumberGenerator` reads the kernel's CSPRNG (getrandom on Linux), which
    /// is what makes these values unguessable; never swap in a seeded generator here.
    package static func random(byteCount: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount + 8)
        while bytes.count < byteCount {
            withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
        }
        return encode(bytes.prefix(byteCount))
    }

    /// True when `text` is exactly `count` characters of `[0-9a-f]`.
    ///
    /// Uppercase is refused on purpose: tokens are compared and hashed as strings, so
    /// accepting two spellings of one token would make the stored hash miss one of them.
    package static func isLowercase(_ text: some StringProtocol, count: Int) -> Bool {
        guard text.utf8.count == count else { return false }
        return text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
