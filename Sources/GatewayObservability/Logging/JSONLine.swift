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
        let valueCount = JSONText.quotedCount(value)
        field(key, valueCount: valueCount) { JSONText.writeQuoted(value, quotedCount: valueCount, to: &$0) }
    }

    /// Fields written in the code as JSON (`"level":"info","logger":"access"`), copied as they
    /// are: one copy for the fields every line of a kind starts with.
    package mutating func members(_ json: StaticString) {
        member(capacity: json.utf8CodeUnitCount) { $0.write(json) }
    }

    /// A field whose key comes from elsewhere (log metadata): escaped like a value.
    package mutating func string(named key: String, _ value: String) {
        let keyCount = JSONText.quotedCount(key), valueCount = JSONText.quotedCount(value)
        member(capacity: 1 + keyCount + valueCount) { cursor in
            JSONText.writeQuoted(key, quotedCount: keyCount, to: &cursor)
            cursor.write(UInt8(ascii: ":"))
            JSONText.writeQuoted(value, quotedCount: valueCount, to: &cursor)
        }
    }

    package mutating func integer(_ key: StaticString, _ value: Int) {
        field(key, valueCount: JSONText.maxDecimalCount) { JSONText.writeDecimal(Int64(value), to: &$0) }
    }

    /// `value` with three decimals (milliseconds to the microsecond).
    package mutating func milliseconds(_ key: StaticString, _ duration: Duration) {
        let micros = duration.inMicroseconds
        field(key, valueCount: JSONText.maxDecimalCount + 4) { cursor in
            JSONText.writeDecimal(Int64(micros / 1000), to: &cursor)
            cursor.write(UInt8(ascii: "."))
            cursor.writeDigits(Int(micros % 1000), width: 3)
        }
    }

    /// `ts`: UTC, RFC 3339 with milliseconds (`2026-11-22T10:41:00.123Z`).
    package mutating func timestamp(_ date: Date = Date()) {
        var second = Second()
        timestamp(date, second: &second)
    }

    /// ``timestamp(_:)`` for a writer of many lines, which keeps `second` from line to line.
    package mutating func timestamp(_ date: Date = Date(), second: inout Second) {
        Self.refresh(&second, for: date)
        field("ts", valueCount: Self.timestampCount + 2) { cursor in
            cursor.write(UInt8(ascii: "\""))
            Self.writeTimestamp(date, second: second, to: &cursor)
            cursor.write(UInt8(ascii: "\""))
        }
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
        refresh(&second, for: date)
        ByteCursor.append(to: &bytes, capacity: timestampCount) { writeTimestamp(date, second: second, to: &$0) }
    }

    /// The bytes of a timestamp: `2026-11-22T10:41:00.123Z`.
    private static var timestampCount: Int { 24 }

    private static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// Makes `second` the text of `date`'s second, unless it already is.
    private static func refresh(_ second: inout Second, for date: Date) {
        let epochSecond = milliseconds(date) / 1000
        guard second.epochSecond != epochSecond else { return }
        second.epochSecond = epochSecond
        var seconds = time_t(epochSecond)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        second.text.removeAll(keepingCapacity: true)
        ByteCursor.append(to: &second.text, capacity: timestampCount - 4) { cursor in
            cursor.writeDigits(Int(parts.tm_year) + 1900, width: 4)
            cursor.write(UInt8(ascii: "-"))
            cursor.writeDigits(Int(parts.tm_mon) + 1, width: 2)
            cursor.write(UInt8(ascii: "-"))
            cursor.writeDigits(Int(parts.tm_mday), width: 2)
            cursor.write(UInt8(ascii: "T"))
            cursor.writeDigits(Int(parts.tm_hour), width: 2)
            cursor.write(UInt8(ascii: ":"))
            cursor.writeDigits(Int(parts.tm_min), width: 2)
            cursor.write(UInt8(ascii: ":"))
            cursor.writeDigits(Int(parts.tm_sec), width: 2)
            cursor.write(UInt8(ascii: "."))
        }
    }

    /// `date` as a timestamp, whose second's text `second` holds.
    private static func writeTimestamp(_ date: Date, second: Second, to cursor: inout ByteCursor) {
        second.text.withUnsafeBufferPointer { cursor.write($0) }
        cursor.writeDigits(Int(milliseconds(date) % 1000), width: 3)
        cursor.write(UInt8(ascii: "Z"))
    }

    /// A field whose value `writeValue` writes in at most `valueCount` bytes, with its key
    /// (the gateway's own keys need no escaping).
    @inline(__always)
    private mutating func field(_ key: StaticString, valueCount: Int, _ writeValue: (inout ByteCursor) -> Void) {
        member(capacity: 3 + key.utf8CodeUnitCount + valueCount) { cursor in
            cursor.write(UInt8(ascii: "\""))
            cursor.write(key)
            cursor.write(UInt8(ascii: "\""))
            cursor.write(UInt8(ascii: ":"))
            writeValue(&cursor)
        }
    }

    /// What `write` writes in at most `capacity` bytes, appended in one copy after the comma
    /// that comes before every member but the first.
    @inline(__always)
    private mutating func member(capacity: Int, _ write: (inout ByteCursor) -> Void) {
        let isFirst = self.isFirst
        self.isFirst = false
        ByteCursor.append(to: &bytes, capacity: 1 + capacity) { cursor in
            if !isFirst { cursor.write(UInt8(ascii: ",")) }
            write(&cursor)
        }
    }
}
