import GatewayPrimitives
import Testing

@Suite("ConstantTime: equality of secrets")
struct ConstantTimeTests {
    @Test func sameBytesAreEqualAndAnyDifferenceIsNot() {
        let key = "pk_live_0123456789abcdef0123456789abcdef"
        #expect(ConstantTime.equal(key, String(key.utf8.map { Character(UnicodeScalar($0)) })))
        #expect(!ConstantTime.equal(key, "pk_live_0123456789abcdef0123456789abcdee"))
        #expect(!ConstantTime.equal(key, "Pk_live_0123456789abcdef0123456789abcdef"))
        #expect(!ConstantTime.equal(key, String(key.dropLast())))
        #expect(!ConstantTime.equal(key, ""))
        #expect(ConstantTime.equal("", ""))
    }

    @Test func bytesNotCharactersAreCompared() {
        // "é" precomposed and decomposed are one Character to `==`, but not the same bytes.
        #expect("\u{e9}" == "e\u{301}")
        #expect(!ConstantTime.equal("\u{e9}", "e\u{301}"))
    }
}
