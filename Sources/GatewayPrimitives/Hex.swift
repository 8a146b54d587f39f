/// Lowercase hexadecimal, the one alphabet for everything the gateway generates or hashes by
/// itself (ids, token hashes, phone digests, key ids).
///
/// Hex rather than base64url because these values travel through Redis keys, logs and JSON,
/// where a fixed `[0-9a-f]` alphabet needs no escaping and is trivial to validate strictly.
/// The text is written straight into the string's storage: key hashes and request ids are
/// formatted on every request, and a String per byte would cost more than the SHA-256 itself.
public enum Hex {
    /// Lowercase hex of `bytes`, two characters per byte.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let array = Array(bytes)
        return encode(array, count: array.count)
    }

    /// Lowercase hex of the first `count` bytes of `bytes`, which must hold at least that
    /// many (a digest whose size the caller knows, without copying it into an array first).
    public static func encode(_ bytes: some Sequence<UInt8>, count: Int) -> String {
        String(unsafeUninitializedCapacity: count * 2) { buffer in
            write(bytes, count: count, into: buffer, at: 0)
        }
    }

    /// Writes the lowercase hex of the first `count` bytes of `bytes` into `buffer` from
    /// `offset` (for a string that holds more than the hex); returns the index after it.
    @discardableResult
    public static func write(_ bytes: some Sequence<UInt8>, count: Int, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) -> Int {
        var index = offset
        for byte in bytes.prefix(count) {
            buffer[index] = digit(byte >> 4)
            buffer[index + 1] = digit(byte & 0x0F)
            index += 2
        }
        return index
    }

    /// `high` then `low`, big-endian: 32 characters.
    public static func encode(_ high: UInt64, _ low: UInt64) -> String {
        String(unsafeUninitializedCapacity: 32) { buffer in
            write(high, into: buffer, at: 0)
            write(low, into: buffer, at: 16)
            return 32
        }
    }

    /// True when `text` is exactly `count` characters of `[0-9a-f]`.
    ///
    /// Uppercase is refused on purpose: tokens are compared and hashed as strings, so
    /// accepting two spellings of one token would make the stored hash miss one of them.
    public static func isLowercase(_ text: some StringProtocol, count: Int) -> Bool {
        guard text.utf8.count == count else { return false }
        return text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Writes `value` as 16 characters (big-endian) into `buffer` from `offset`.
    public static func write(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        var remaining = value
        for index in stride(from: offset + 15, through: offset, by: -1) {
            buffer[index] = digit(UInt8(truncatingIfNeeded: remaining & 0xF))
            remaining >>= 4
        }
    }

    /// The character of a value below 16, worked out rather than looked up: a global table is
    /// initialised lazily, and every read of it passes through that check.
    private static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") - 10 + value
    }
}
