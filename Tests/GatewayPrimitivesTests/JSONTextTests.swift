import Foundation
import GatewayPrimitives
import Testing

/// Whatever a string holds, its quoted form is one JSON string that reads back as it.
@Suite struct JSONTextTests {
    @Test(arguments: ["", "plain-id_42", "quote\" backslash\\", "\n\r\t\u{0}\u{1F}\u{7F}", "ಬೆಂಗಳೂರು 🚕", "\"},\"forged\":\"x"])
    func aQuotedStringReadsBackAsItself(_ text: String) throws {
        var bytes: [UInt8] = []
        JSONText.appendQuoted(text, to: &bytes)
        #expect(try JSONDecoder().decode(String.self, from: Data(bytes)) == text)
        // Nothing below 0x20 (a line break would end a log line) and no DEL goes out raw.
        #expect(!bytes.contains { $0 < 0x20 || $0 == 0x7F })
        // The count that sizes the space written into is the count written.
        #expect(JSONText.quotedCount(text) == bytes.count)
    }

    @Test func plainTextIsCopiedAsItIs() {
        var bytes: [UInt8] = []
        JSONText.appendQuoted("u_3f1c", to: &bytes)
        #expect(bytes == Array(#""u_3f1c""#.utf8))
    }

    @Test(arguments: [Int64.min, -1, 0, 7, 1_700_000_000, Int64.max])
    func decimalsAreWrittenAsSwiftPrintsThem(_ value: Int64) {
        var bytes: [UInt8] = []
        JSONText.appendDecimal(value, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == String(value))
    }
}
