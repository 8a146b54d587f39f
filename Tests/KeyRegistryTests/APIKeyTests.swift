@testable import KeyRegistry
import Testing

@Suite struct APIKeyTests {
    @Test func generatedKeysHaveTheSpecShape() throws {
        var seen = Set<String>()
        for _ in 0..<1000 {
            let key = APIKey.generate()
            #expect(key.text.hasPrefix("pgk_live_"))
            #expect(key.text.count == 9 + 43 + 1 + 6)
            #expect(APIKey(key.text) == key)
            seen.insert(key.text)
        }
        #expect(seen.count == 1000)
    }

    @Test func anyMistypedCharacterIsRejected() throws {
        let key = APIKey.generate().text
        let characters = Array(key)
        for index in characters.indices where index >= 9 && characters[index] != "_" {
            var mistyped = characters
            mistyped[index] = characters[index] == "a" ? "b" : "a"
            #expect(APIKey(String(mistyped)) == nil, "a change at \(index) must be caught")
        }
        #expect(APIKey(String(key.dropLast())) == nil)
        #expect(APIKey(key + "x") == nil)
        #expect(APIKey(key.replacingOccurrences(of: "pgk_live_", with: "pgk_test_")) == nil)
        #expect(APIKey("") == nil)
    }

    @Test func printsOnlyItsPrefix() {
        let key = APIKey.generate()
        #expect("\(key)" == key.displayPrefix)
        #expect(!"\(key)".contains(key.text))
        #expect(key.hash.count == 64)
    }

    @Test func crc32KnownAnswer() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    }
}
