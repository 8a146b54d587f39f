import DriverTokens
import Foundation
import JWTKit
import Testing

/// Each way a presented access token must be refused (docs/public-api.md).
@Suite struct AccessTokenRefusalTests {
    private func expectRefusal(
        _ token: String, _ error: AccessTokenError, verifier: AccessTokenVerifier? = nil, now: Date = Date(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let verifier = if let verifier { verifier } else { try await Fixtures.verifier() }
        await #expect(throws: error, sourceLocation: sourceLocation) {
            try await verifier.verify(token, now: now)
        }
        #expect(verifier.cachedClaims(for: token) == nil, sourceLocation: sourceLocation)
    }

    @Test func tokenSignedWithAnotherSecret() async throws {
        let other = try AccessTokenSigningKey(kid: "k1", secret: Fixtures.secret2)
        let issued = try await Fixtures.signer([other]).sign(
            userID: "usr_1", sessionID: Fixtures.familyID, channel: .otp)
        try await expectRefusal(issued.token, .badSignature)
    }

    @Test func algNone() async throws {
        let header = #"{"alg":"none","kid":"k1","typ":"JWT"}"#
        let payload = try JSONEncoder().encode(Fixtures.claims())
        let token = Fixtures.base64URL(Array(header.utf8)) + "." + Fixtures.base64URL(payload) + "."
        try await expectRefusal(token, .unsupportedAlgorithm)
    }

    @Test func algNoneWithAValidHS256Signature() async throws {
        // The signature is genuine; only the header lies about the algorithm.
        let token = try await Fixtures.collection().sign(Fixtures.claims(), kid: "k1", header: ["alg": "none"])
        try await expectRefusal(token, .unsupportedAlgorithm)
    }

    @Test func hs512WithTheSameSecretAndKid() async throws {
        let token = try await Fixtures.collection(digest: .sha512).sign(Fixtures.claims(), kid: "k1")
        #expect(try Fixtures.json(of: token, segment: 0)["alg"] as? String == "HS512")
        try await expectRefusal(token, .unsupportedAlgorithm)
    }

    @Test func hs384WithTheSameSecretAndKid() async throws {
        let token = try await Fixtures.collection(digest: .sha384).sign(Fixtures.claims(), kid: "k1")
        try await expectRefusal(token, .unsupportedAlgorithm)
    }

    @Test(arguments: ["HS512", "RS256", "ES256", "EdDSA", "hs256", "HS256 "])
    func headerAlgOtherThanHS256OverAnHS256Signature(alg: String) async throws {
        let token = try await Fixtures.collection().sign(Fixtures.claims(), kid: "k1", header: ["alg": .string(alg)])
        try await expectRefusal(token, .unsupportedAlgorithm)
    }

    @Test func unknownKid() async throws {
        let token = try await Fixtures.collection(kid: "k9").sign(Fixtures.claims(), kid: "k9")
        try await expectRefusal(token, .unknownKeyID)
    }

    @Test func noKid() async throws {
        let token = try await Fixtures.collection(kid: nil).sign(Fixtures.claims())
        #expect(try Fixtures.json(of: token, segment: 0)["kid"] == nil)
        try await expectRefusal(token, .missingKeyID)
    }

    @Test func kidThatIsNotAString() async throws {
        let token = try await Fixtures.collection().sign(Fixtures.claims(), header: ["kid": .int(1)])
        try await expectRefusal(token, .malformed)
    }

    @Test func critHeader() async throws {
        let token = try await Fixtures.collection().sign(
            Fixtures.claims(), kid: "k1", header: ["crit": .array([.string("exp")])])
        try await expectRefusal(token, .unsupportedAlgorithm)
    }

    @Test func expiredByTenSeconds() async throws {
        let now = Fixtures.now()
        let issued = try await Fixtures.signer().sign(
            userID: "usr_1", sessionID: Fixtures.familyID, channel: .otp,
            now: now.addingTimeInterval(-Fixtures.ttl - 10))
        try await expectRefusal(issued.token, .expired, now: now)
    }

    @Test func expiredByThreeSecondsIsWithinTheLeeway() async throws {
        let now = Fixtures.now()
        let issued = try await Fixtures.signer().sign(
            userID: "usr_1", sessionID: Fixtures.familyID, channel: .otp,
            now: now.addingTimeInterval(-Fixtures.ttl - 3))
        #expect(issued.claims.expiresAt == now.addingTimeInterval(-3))

        let lenient = try await Fixtures.verifier(leeway: 5)
        #expect(try await lenient.verify(issued.token, now: now) == issued.claims)

        let strict = try await Fixtures.verifier(leeway: 0)
        try await expectRefusal(issued.token, .expired, verifier: strict, now: now)
    }

    @Test func cachedTokenIsRefusedOnceExpired() async throws {
        let verifier = try await Fixtures.verifier()
        let issued = try await Fixtures.signer().sign(userID: "usr_1", sessionID: Fixtures.familyID, channel: .otp)
        _ = try await verifier.verify(issued.token)
        let later = issued.claims.expiresAt.addingTimeInterval(6)
        #expect(verifier.cachedClaims(for: issued.token, now: later) == nil)
        await #expect(throws: AccessTokenError.expired) { try await verifier.verify(issued.token, now: later) }
    }

    @Test func wrongIssuer() async throws {
        let issued = try await Fixtures.signer(issuer: "someone-else").sign(
            userID: "usr_1", sessionID: Fixtures.familyID, channel: .otp)
        try await expectRefusal(issued.token, .wrongIssuer)
    }

    @Test func payloadAlteredAfterSigning() async throws {
        let issued = try await Fixtures.signer().sign(userID: "usr_1", sessionID: Fixtures.familyID, channel: .otp)
        let payload = String(decoding: try JSONEncoder().encode(issued.claims), as: UTF8.self)
        let forged = Fixtures.replacing(
            segment: 1, of: issued.token, with: payload.replacingOccurrences(of: "usr_1", with: "usr_2"))
        try await expectRefusal(forged, .badSignature)
    }

    @Test(arguments: [
        "", ".", "..", "...", "a", "a.b", "a.b.c", "a.b.c.d", "not a token", "Bearer abc.def.ghi",
        "eyJhbGciOiJIUzI1NiJ9", "eyJhbGciOiJIUzI1NiJ9..", "!!!.###.$$$", "ey\u{0}J.ey.sig", "é.é.é",
        "eyJhbGciOiJIUzI1NiIsImtpZCI6ImsxIn0=.e30.c2ln",
    ])
    func garbage(token: String) async throws {
        try await expectRefusal(token, .malformed)
    }

    @Test func signedTokenWithJSONThatIsNotOurClaims() async throws {
        // A genuine HS256 signature over a payload that is not an object of our claims.
        struct WrongShape: JWTPayload {
            var user_id = 1
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let token = try await Fixtures.collection().sign(WrongShape(), kid: "k1")
        try await expectRefusal(token, .malformed)
    }

    @Test func otpTokenWithAPartnerIDIsRefused() async throws {
        let collection = await Fixtures.collection()
        struct Mixed: JWTPayload {
            var user_id = "usr_1", sid = Fixtures.familyID, jti = "x", iss = Fixtures.issuer
            var channel = "otp", partner_id = "ptn_1"
            var iat = Int(Date().timeIntervalSince1970), exp = Int(Date().timeIntervalSince1970) + 600
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        try await expectRefusal(try await collection.sign(Mixed(), kid: "k1"), .malformed)
    }

    @Test func hugeInput() async throws {
        try await expectRefusal(String(repeating: "a", count: 100_000), .tooLong)
        let issued = try await Fixtures.signer().sign(userID: "usr_1", sessionID: Fixtures.familyID, channel: .otp)
        try await expectRefusal(issued.token + String(repeating: "A", count: 100_000), .tooLong)
    }

    private func token(issuedIn issued: TimeInterval, notBeforeIn notBefore: TimeInterval?) async throws -> String {
        let now = Fixtures.now()
        let claims = AccessTokenClaims(
            userID: "usr_test", sessionID: Fixtures.familyID, channel: .otp, tokenID: "jti-\(issued)-\(notBefore ?? -1)",
            issuer: Fixtures.issuer, issuedAt: now.addingTimeInterval(issued), expiresAt: now.addingTimeInterval(issued + Fixtures.ttl),
            notBefore: notBefore.map { now.addingTimeInterval($0) })
        return try await Fixtures.collection().sign(claims, kid: "k1")
    }

    @Test(arguments: [60.0, 6.0, 3600.0])
    func notBeforeInTheFutureBeyondTheLeeway(seconds: TimeInterval) async throws {
        try await expectRefusal(try await token(issuedIn: 0, notBeforeIn: seconds), .notYetValid)
    }

    @Test(arguments: [60.0, 6.0, 86_400.0])
    func issuedAtInTheFutureBeyondTheLeeway(seconds: TimeInterval) async throws {
        try await expectRefusal(try await token(issuedIn: seconds, notBeforeIn: nil), .notYetValid)
    }

    /// The same skew `exp` is allowed is allowed here: clocks a few seconds apart still agree.
    @Test(arguments: [(0.0, -60.0), (0.0, 4.0), (4.0, nil), (4.0, 4.0)] as [(TimeInterval, TimeInterval?)])
    func issuedAtAndNotBeforeWithinTheLeewayAreAccepted(issued: TimeInterval, notBefore: TimeInterval?) async throws {
        let verifier = try await Fixtures.verifier()
        let claims = try await verifier.verify(try await token(issuedIn: issued, notBeforeIn: notBefore))
        #expect(claims.userID == "usr_test")
    }

    @Test func theLeewayIsTheVerifiersOwn() async throws {
        let strict = try await Fixtures.verifier(leeway: 0)
        try await expectRefusal(try await token(issuedIn: 0, notBeforeIn: 2), .notYetValid, verifier: strict)
        try await expectRefusal(try await token(issuedIn: 2, notBeforeIn: nil), .notYetValid, verifier: strict)
    }
}
