import Foundation
import JWTKit
@testable import DriverTokens
import Testing

/// The signer's JSON encoder gives what Foundation's gives, a remembered header included, and
/// never a remembered header for a different one.
@Suite struct HeaderMemoJSONEncoderTests {
    static func reference() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }

    @Test func headersAreEncodedAsFoundationDoesAndOnlyAnEqualOneIsRemembered() throws {
        let encoder = HeaderMemoJSONEncoder()
        let first: JWTHeader = ["alg": .string("HS256"), "kid": .string("k1"), "typ": .string("JWT")]
        let second: JWTHeader = ["alg": .string("HS256"), "kid": .string("k2"), "typ": .string("JWT")]
        for (header, kid) in [(first, "k1"), (first, "k1"), (second, "k2"), (first, "k1"), (second, "k2"), (second, "k2")] {
            let json = try encoder.encode(header)
            let decoded = try JSONDecoder().decode([String: String].self, from: json)
            #expect(decoded == ["alg": "HS256", "kid": kid, "typ": "JWT"])
        }
    }

    @Test func claimsAreEncodedAsFoundationDoesEveryTime() throws {
        let encoder = HeaderMemoJSONEncoder()
        for seconds in [1_700_000_000, 1_700_000_001] {
            let value = ["iat": Date(timeIntervalSince1970: TimeInterval(seconds))]
            #expect(try encoder.encode(value) == Self.reference().encode(value))
        }
    }
}
