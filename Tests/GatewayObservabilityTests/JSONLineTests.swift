@testable import GatewayObservability
import Foundation
import Testing

/// ``JSONLine`` sizes each field before it copies it in one go: every kind of field comes out
/// byte for byte, separators and escapes included, and a field that needs escaping is never cut.
@Suite struct JSONLineTests {
    @Test func everyKindOfFieldIsWrittenExactly() {
        var buffer = Array("before\n".utf8)
        var second = JSONLine.Second()
        var line = JSONLine(appendingTo: &buffer)
        // 2026-11-22T10:41:00.123Z
        line.timestamp(Date(timeIntervalSince1970: 1_795_344_060.123_4), second: &second)
        line.members(#""level":"info""#)
        line.string("plain", "usr_2e50")
        line.string("escaped", "a\"b\\c\nd\u{1}")
        line.string(named: "k\"ey", "ಬೆಂ")
        line.integer("negative", -42)
        line.integer("largest", Int.max)
        line.milliseconds("duration_ms", .microseconds(1_234_005))
        line.finish(into: &buffer)
        let expected = #"before"# + "\n"
            + #"{"ts":"2026-11-22T10:41:00.123Z","level":"info","plain":"usr_2e50","escaped":"a\"b\\c\nd\u0001","k\"ey":"ಬೆಂ","#
            + #""negative":-42,"largest":9223372036854775807,"duration_ms":1234.005}"# + "\n"
        #expect(String(decoding: buffer, as: UTF8.self) == expected)
    }

    @Test func theSecondsTextIsRemadeWhenTheSecondChanges() {
        var second = JSONLine.Second()
        var bytes: [UInt8] = []
        JSONLine.appendTimestamp(Date(timeIntervalSince1970: 1_795_344_059.999_5), to: &bytes, second: &second)
        JSONLine.appendTimestamp(Date(timeIntervalSince1970: 1_795_344_060.001_5), to: &bytes, second: &second)
        #expect(String(decoding: bytes, as: UTF8.self) == "2026-11-22T10:40:59.999Z2026-11-22T10:41:00.001Z")
    }
}
