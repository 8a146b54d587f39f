/// JSON strings and integers appended straight to a byte buffer: the one escaping of every
/// JSON the gateway writes by hand (log lines, the token pair, access-token claims), where
/// `JSONEncoder` would cost an encoder and its containers per request.
public enum JSONText {
    /// `text` as a JSON string: quotes, backslashes and control characters escaped, so a value
    /// can never end its string or forge another field.
    public static func appendQuoted(_ text: String, to bytes: inout [UInt8]) {
        let count = quotedCount(text)
        ByteCursor.append(to: &bytes, capacity: count) { writeQuoted(text, quotedCount: count, to: &$0) }
    }

    /// How many bytes `text` takes as a JSON string, quotes included.
    public static func quotedCount(_ text: String) -> Int {
        // Ids, labels and addresses need no escaping: their count is their length, from a
        // scan over the string's own bytes rather than through its view.
        if let plain = text.utf8.withContiguousStorageIfAvailable({ utf8 in
            utf8.allSatisfy(needsNoEscape) ? utf8.count + 2 : nil
        }) ?? nil {
            return plain
        }
        var count = 2
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): count += 2
            case 0..<0x20, 0x7F: count += 6
            default: count += 1
            }
        }
        return count
    }

    /// Writes `text` as a JSON string of `quotedCount` bytes (``quotedCount(_:)``'s answer).
    public static func writeQuoted(_ text: String, quotedCount: Int, to cursor: inout ByteCursor) {
        cursor.write(UInt8(ascii: "\""))
        // Every escape lengthens the string, so a count of its length plus the quotes means
        // there is nothing to escape: the bytes are copied whole.
        let copiedWhole = quotedCount == text.utf8.count + 2
            && text.utf8.withContiguousStorageIfAvailable { cursor.write($0) } != nil
        if !copiedWhole {
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""): cursor.write(#"\""#)
                case UInt8(ascii: "\\"): cursor.write(#"\\"#)
                case UInt8(ascii: "\n"): cursor.write(#"\n"#)
                case UInt8(ascii: "\r"): cursor.write(#"\r"#)
                case UInt8(ascii: "\t"): cursor.write(#"\t"#)
                case 0..<0x20, 0x7F:
                    cursor.write(#"\u00"#)
                    cursor.write(hexDigit(byte >> 4))
                    cursor.write(hexDigit(byte & 0xF))
                default:
                    cursor.write(byte)
                }
            }
        }
        cursor.write(UInt8(ascii: "\""))
    }

    /// `value` in decimal, written without making a `String` of it.
    public static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        ByteCursor.append(to: &bytes, capacity: maxDecimalCount) { writeDecimal(value, to: &$0) }
    }

    /// The most bytes ``writeDecimal(_:to:)`` writes (`Int64.min`).
    public static var maxDecimalCount: Int { 20 }

    public static func writeDecimal(_ value: Int64, to cursor: inout ByteCursor) {
        if value < 0 { cursor.write(UInt8(ascii: "-")) }
        // An Int64's magnitude has at most 19 digits.
        var digits = 1
        var power: UInt64 = 10
        while digits < 19, value.magnitude >= power {
            digits += 1
            power &*= 10
        }
        cursor.writeDigits(value.magnitude, width: digits)
    }

    private static func needsNoEscape(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte != 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
