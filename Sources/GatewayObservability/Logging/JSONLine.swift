import Foundation
import GatewayPrimitives
#if canImport(Glibc)
import Glibc
#endif

/// Builds one log line as a JSON object, straight into a byte buffer.
///
/// Both kinds of line (``JSONLogHandler``'s and the access log's ``AccessLogRecord``) are
/// written with it, so every line has the same timestamp format and the same escaping. It
/// appends to a caller's buffer instead of going through `JSONSerialization`/`Codable`: the
/// access line is made for every request, and those allocate a dictionary or an encoder per
/// line.
package struct JSONLine {
    package private(set) var bytes: [UInt8]
    private var isFirst = true

    /// Starts the object at the end of `buffer`, taking the buffer over (no copy) until
    /// ``finish(into:)`` hands it back.
    package init(appendingTo buffer: inout [UInt8]) {
        bytes = []
        swap(&bytes, &buffer)
        bytes.append(UInt8(ascii: "{"))
    }

    /// Closes the object and the line, and hands the buffer back.
    package mutating func finish(into buffer: inout [UInt8]) {
        bytes.append(contentsOf: "}\n".utf8)
        swap(&bytes, &buffer)
    }

    /// A field whose key is written in the code: the key is copied as it is, unchecked (the
    /// gateway's own keys need no escaping).
    package mutating func string(_ key: StaticString, _ value: String) {
        appendKey(key)
        Self.appendQuoted(value, to: &bytes)
    }

    /// A field whose key comes from elsewhere (log metadata): escaped like a value.
    package mutating func string(named key: String, _ value: String) {
        separate()
        Self.appendQuoted(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        Self.appendQuoted(value, to: &bytes)
    }

    package mutating func integer(_ key: StaticString, _ value: Int) {
        appendKey(key)
        Self.appendDecimal(value, to: &bytes)
    }

    /// `value` with three decimals (milliseconds to the microsecond).
    package mutating func milliseconds(_ key: StaticString, _ duration: Duration) {
        appendKey(key)
        let micros = duration.inMicroseconds
        Self.appendDecimal(Int(micros / 1000), to: &bytes)
        bytes.append(UInt8(ascii: "."))
        Self.appendDigits(Int(micros % 1000), width: 3, to: &bytes)
    }

    /// `ts`: UTC, RFC 3339 with milliseconds (`2026-11-22T10:41:00.123Z`).
    package mutating func timestamp(_ date: Date = Date()) {
        var second = Second()
        timestamp(date, second: &second)
    }

    /// ``timestamp(_:)`` for a writer of many lines, which keeps `second` from line to line.
    package mutating func timestamp(_ date: Date = Date(), second: inout Second) {
        appendKey("ts")
        bytes.append(UInt8(ascii: "\""))
        Self.appendTimestamp(date, to: &bytes, second: &second)
        bytes.append(UInt8(ascii: "\""))
    }

    /// The text of one second of a timestamp (`2026-11-22T10:41:00.`), made once per second
    /// instead of once per line, so an access line costs no calendar conversion.
    package struct Second {
        fileprivate var epochSecond = Int64.min
        fileprivate var text: [UInt8] = []

        package init() {}
    }

    package static func appendTimestamp(_ date: Date, to bytes: inout [UInt8]) {
        var second = Second()
        appendTimestamp(date, to: &bytes, second: &second)
    }

    package static func appendTimestamp(_ date: Date, to bytes: inout [UInt8], second: inout Second) {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let epochSecond = milliseconds / 1000
        if second.epochSecond != epochSecond {
            second.epochSecond = epochSecond
            second.text.removeAll(keepingCapacity: true)
            var seconds = time_t(epochSecond)
            var parts = tm()
            gmtime_r(&seconds, &parts)
            appendDigits(Int(parts.tm_year) + 1900, width: 4, to: &second.text)
            second.text.append(UInt8(ascii: "-"))
            appendDigits(Int(parts.tm_mon) + 1, width: 2, to: &second.text)
            second.text.append(UInt8(ascii: "-"))
            appendDigits(Int(parts.tm_mday), width: 2, to: &second.text)
            second.text.append(UInt8(ascii: "T"))
            appendDigits(Int(parts.tm_hour), width: 2, to: &second.text)
            second.text.append(UInt8(ascii: ":"))
            appendDigits(Int(parts.tm_min), width: 2, to: &second.text)
            second.text.append(UInt8(ascii: ":"))
            appendDigits(Int(parts.tm_sec), width: 2, to: &second.text)
            second.text.append(UInt8(ascii: "."))
        }
        bytes.append(contentsOf: second.text)
        appendDigits(Int(milliseconds % 1000), width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    private static func appendDigits(_ value: Int, width: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }

    /// `value` in decimal, written without making a `String` of it.
    package static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
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

    private mutating func separate() {
        if isFirst {
            isFirst = false
        } else {
            bytes.append(UInt8(ascii: ","))
        }
    }

    private mutating func appendKey(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: "\":".utf8)
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped, so a value
    /// can never end the line or forge another field.
    package static func appendQuoted(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Ids, labels and addresses need no escaping: checked and copied whole over the
        // string's own bytes, not byte by byte through its view (every access line holds a
        // dozen of them).
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

    private static func needsNoEscape(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte != 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
