/// JSON strings and integers appended straight to a byte buffer: the one escaping of every
/// JSON the gateway writes by hand (log lines, the token pair, access-token claims), where
/// `JSONEncoder` would cost an encoder and its containers per request.
public enum JSONText {
    /// `text` as a JSON string: quotes, backslashes and control characters escaped, so a value
    /// can never end its string or forge another field.
    public static func appendQuoted(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Ids, labels and addresses need no escaping: checked and copied whole over the
        // string's own bytes, not byte by byte through its view.
        let copiedWhole = text.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            for byte in utf8 where !needsNoEscape(byte) { return false }
            bytes.append(contentsOf: utf8)
            return true
        } ?? false
        if copiedWhole {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): bytes.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): bytes.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): bytes.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20, 0x7F:
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(hexDigit(byte >> 4))
                bytes.append(hexDigit(byte & 0xF))
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `value` in decimal, written without making a `String` of it.
    public static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var rest = value.magnitude
        // The digits come out last first: gathered on the stack, then appended in one go.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    private static func needsNoEscape(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte != 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
