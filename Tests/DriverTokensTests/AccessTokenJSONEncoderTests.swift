import Foundation
import JWTKit
@testable import DriverTokens
import Testing

/// The signer's JSON encoder gives what Foundation's gives: a remembered header only for an
/// equal one, and claims written by hand that read back as the same claims.
@Suite struct AccessTokenJSONEncoderTests {
    static func reference() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }

    static func claims(
        userID: String = "u_3f1c", channel: AccessTokenChannel = .otp, issuer: String = "partner-gateway",
        notBefore: Date? = nil
    ) -> AccessTokenClaims {
        AccessTokenClaims(
            userID: userID, sessionID: "f_9a0b", channel: channel, tokenID: "t_77e1", issuer: issuer,
            issuedAt: Date(timeIntervalSince1970: 1_700_000_000.75), expiresAt: Date(timeIntervalSince1970: 1_700_000_900),
            notBefore: notBefore
        )
    }

    @Test func headersAreEncodedAsFoundationDoesAndOnlyAnEqualOneIsRemembered() throws {
        let encoder = AccessTokenJSONEncoder()
        let first: JWTHeader = ["alg": .string("HS256"), "kid": .string("k1"), "typ": .string("JWT")]
        let second: JWTHeader = ["alg": .string("HS256"), "kid": .string("k2"), "typ": .string("JWT")]
        for (header, kid) in [(first, "k1"), (first, "k1"), (second, "k2"), (first, "k1"), (second, "k2"), (second, "k2")] {
            let json = try encoder.encode(header)
            let decoded = try JSONDecoder().decode([String: String].self, from: json)
            #expect(decoded == ["alg": "HS256", "kid": kid, "typ": "JWT"])
        }
    }

    @Test(arguments: [
        claims(),
        claims(channel: .partnerSDK(partnerID: "p_42")),
        claims(notBefore: Date(timeIntervalSince1970: 1_700_000_100)),
    ])
    func claimsAreWrittenAsFoundationEncodesThem(_ claims: AccessTokenClaims) throws {
        // Foundation's key order varies from run to run: the objects are compared.
        let written = try JSONSerialization.jsonObject(with: AccessTokenJSONEncoder().encode(claims)) as? NSDictionary
        let encoded = try JSONSerialization.jsonObject(with: Self.reference().encode(claims)) as? NSDictionary
        #expect(written != nil && written == encoded)
    }

    @Test func claimsAreWrittenInTheirFixedOrder() throws {
        let json = try AccessTokenJSONEncoder().encode(Self.claims(channel: .partnerSDK(partnerID: "p_42")))
        #expect(String(decoding: json, as: UTF8.self) == #"{"user_id":"u_3f1c","exp":1700000900,"iat":1700000000,"jti":"t_77e1","iss":"partner-gateway","sid":"f_9a0b","channel":"partner_sdk","partner_id":"p_42"}"#)
    }

    /// Foundation would escape differently (`/` as `\/`, no escape for DEL), so these are
    /// compared by what they decode to.
    @Test(arguments: ["quote\"and\\backslash", "https://issuer.example/a", "line\nbreak\u{0}\u{7F}", "ಬೆಂಗಳೂರು 🚕"])
    func escapedClaimsReadBackAsTheSameClaims(_ text: String) throws {
        let claims = Self.claims(userID: text, channel: .partnerSDK(partnerID: text), issuer: text)
        let json = try AccessTokenJSONEncoder().encode(claims)
        #expect(try JSONDecoder().decode(AccessTokenClaims.self, from: json) == claims.withWholeSeconds)
        #expect(try JSONSerialization.jsonObject(with: json) is [String: Any])
    }

    @Test func otherValuesAreEncodedAsFoundationDoesEveryTime() throws {
        let encoder = AccessTokenJSONEncoder()
        for seconds in [1_700_000_000, 1_700_000_001] {
            let value = ["iat": Date(timeIntervalSince1970: TimeInterval(seconds))]
            #expect(try encoder.encode(value) == Self.reference().encode(value))
        }
    }
}

extension AccessTokenClaims {
    /// These claims as they read back from a token: NumericDates are whole seconds.
    fileprivate var withWholeSeconds: AccessTokenClaims {
        AccessTokenClaims(
            userID: userID, sessionID: sessionID, channel: channel, tokenID: tokenID, issuer: issuer,
            issuedAt: Date(timeIntervalSince1970: TimeInterval(Self.seconds(issuedAt))),
            expiresAt: Date(timeIntervalSince1970: TimeInterval(Self.seconds(expiresAt))),
            notBefore: notBefore.map { Date(timeIntervalSince1970: TimeInterval(Self.seconds($0))) }
        )
    }
}
