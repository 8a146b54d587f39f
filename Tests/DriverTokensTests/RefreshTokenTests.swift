import DriverTokens
import Testing

@Suite struct RefreshTokenTests {
    private func isLowercaseHex(_ text: String) -> Bool {
        text.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
    }

    @Test func formatIs64LowercaseHexWithTheFamilyFirst() {
        let token = RefreshToken.newFamily()
        #expect(token.value.count == 64)
        #expect(isLowercaseHex(token.value))
        #expect(token.familyID.count == 16)
        #expect(token.value.hasPrefix(token.familyID))
    }

    @Test func successorSharesTheFamilyOnly() throws {
        let first = RefreshToken.newFamily()
        let next = first.randomSibling()
        #expect(next.familyID == first.familyID)
        #expect(next.value != first.value)
        #expect(next.value.dropFirst(16) != first.value.dropFirst(16))

        let fromID = try #require(RefreshToken.successor(inFamily: first.familyID))
        #expect(fromID.familyID == first.familyID)
        #expect(fromID.value != next.value)
        #expect(RefreshToken.successor(inFamily: "ABCDEF0123456789") == nil)
        #expect(RefreshToken.successor(inFamily: "0123") == nil)
    }

    /// A retried refresh must recompute the successor it already got: the same token and key
    /// give the same successor; another key, or another token, gives an unrelated one.
    @Test func derivedSuccessorsAreDeterministicPerKeyAndToken() throws {
        let key = RefreshSuccessorKey(derivingFrom: Array("a-server-key-of-at-least-32-bytes-0123".utf8))
        let other = RefreshSuccessorKey(derivingFrom: Array("another-server-key-of-32-bytes-012345".utf8))
        let token = RefreshToken.newFamily()
        let next = token.successor(derivedWith: key)
        #expect(next == token.successor(derivedWith: key))
        #expect(try #require(RefreshToken(parsing: next.value)) == next)
        #expect(next.familyID == token.familyID)
        #expect(next.value != token.value)
        #expect(token.successor(derivedWith: other) != next)
        #expect(next.successor(derivedWith: key) != next)
        #expect(token.randomSibling().successor(derivedWith: key) != next)
        // Nothing of the presented token's secret part shows in its successor.
        #expect(!next.value.contains(token.value.dropFirst(RefreshToken.familyIDLength)))
    }

    @Test func tenThousandTokensAreUnique() {
        var values = Set<String>()
        var families = Set<String>()
        for _ in 0..<10_000 {
            let token = RefreshToken.newFamily()
            values.insert(token.value)
            families.insert(token.familyID)
        }
        #expect(values.count == 10_000)
        #expect(families.count == 10_000)

        let family = RefreshToken.newFamily()
        var successors = Set<String>()
        for _ in 0..<10_000 { successors.insert(family.randomSibling().value) }
        #expect(successors.count == 10_000)
    }

    @Test func parseAcceptsWhatWasIssued() throws {
        let token = RefreshToken.newFamily()
        let parsed = try #require(RefreshToken(parsing: token.value))
        #expect(parsed == token)
        #expect(parsed.familyID == token.familyID)
    }

    @Test(arguments: [
        String(repeating: "a", count: 63),
        String(repeating: "a", count: 65),
        String(repeating: "A", count: 64),
        "0123456789ABCDEF" + String(repeating: "0", count: 48),
        String(repeating: "g", count: 64),
        String(repeating: "0", count: 63) + " ",
        " " + String(repeating: "0", count: 63),
        String(repeating: "0", count: 62) + "é",
        "",
        String(repeating: "0", count: 100_000),
    ])
    func parseRefuses(text: String) {
        #expect(RefreshToken(parsing: text) == nil)
    }

    @Test func sha256HexIsAHashNotTheToken() throws {
        let token = RefreshToken.newFamily()
        #expect(token.sha256Hex.count == 64)
        #expect(isLowercaseHex(token.sha256Hex))
        #expect(token.sha256Hex != token.value)
        #expect(token.sha256Hex == token.sha256Hex)
        #expect(try #require(RefreshToken(parsing: token.value)).sha256Hex == token.sha256Hex)
        #expect(token.randomSibling().sha256Hex != token.sha256Hex)
    }

    @Test func knownSHA256() throws {
        let token = try #require(RefreshToken(parsing: String(repeating: "0", count: 64)))
        // printf '%s' 0000…0000 (64 zeros) | sha256sum
        #expect(token.sha256Hex == "60e05bd1b195af2f94112fa7197a5c88289058840ce7c6df9693756bc6250f55")
    }

    @Test func printingShowsTheFamilyButNeverTheToken() {
        let token = RefreshToken.newFamily()
        #expect(!String(describing: token).contains(token.value))
        #expect(!String(reflecting: token).contains(token.value))
        #expect(!"\(token)".contains(token.value))
        #expect(String(describing: token).contains(token.familyID))
        var dumped = ""
        dump(token, to: &dumped)
        #expect(!dumped.contains(token.value))
    }
}
