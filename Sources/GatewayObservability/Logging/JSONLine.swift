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
        bytes.append(UInt8(ascii: "}"))
        bytes.append(UInt8(ascii: "\n"))
        swap(&bytes, &buffer)
    }

    /// A field whose key is written in the code: the key is copied as it is, unchecked (the
    /// gateway's own keys need no escaping).
    package mutating func string(_ key: StaticString, _ value: String) {
        appendKey(key)
        JSONText.appendQuoted(value, to: &bytes)
    }

    /// A field whose key comes from elsewhere (log metadata): escaped like a value.
    package mutating func string(named key: String, _ value: String) {
        separate()
        JSONText.appendQuoted(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        JSONText.appendQuoted(value, to: &bytes)
    }

    package mutating func integer(_ key: StaticString, _ value: Int) {
        appendKey(key)
        JSONText.appendDecimal(Int64(value), to: &bytes)
    }

    /// `value` with three decimals (milliseconds to the microsecond).
    package mutating func milliseconds(_ key: StaticString, _ duration: Duration) {
        appendKey(key)
        let micros = duration.inMicroseconds
        JSONText.appendDecimal(Int64(micros / 1000), to: &bytes)
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

    private mutating func separate() {
        if isFirst {
            isFirst = false
        } else {
            bytes.append(UInt8(ascii: ","))
        }
    }

    /// Byte by byte around the key: appending a `String`'s bytes goes through its storage
    /// object, which an access line's sixteen keys would pay for on every request.
    private mutating func appendKey(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }
}
