import GatewayPrimitives
import Testing

@Suite("Hex: lowercase encoding and strict validation")
struct HexTests {
    @Test func bytesBecomeTwoLowercaseDigitsEach() {
        #expect(Hex.encode([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.encode([0xde, 0xad, 0xbe, 0xef, 0x01], count: 4) == "deadbeef")
    }

    @Test func twoWordsAreBigEndianAndPadded() {
        #expect(Hex.encode(0x1, 0xabc) == "00000000000000010000000000000abc")
        #expect(Hex.encode(.max, 0) == "ffffffffffffffff0000000000000000")
    }

    @Test func validationAcceptsOnlyLowercaseOfTheExactLength() {
        #expect(Hex.isLowercase("0123456789abcdef", count: 16))
        #expect(!Hex.isLowercase("0123456789ABCDEF", count: 16))
        #expect(!Hex.isLowercase("0123", count: 5))
        #expect(!Hex.isLowercase("012g", count: 4))
    }
}
