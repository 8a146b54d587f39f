import DriverTokens
import JWTKit
import Testing

/// Pins down what jwt-kit 5.8.0 does on its own, which is why AccessTokenVerifier checks
/// the header itself. If one of these starts failing after an upgrade, jwt-kit became
/// stricter: nothing breaks, but the explanation in AccessTokenVerifier should be updated.
@Suite struct JWTKitBehaviourTests {
    @Test func jwtKitFallsBackToTheDefaultKeyForAnUnknownKid() async throws {
        let token = try await Fixtures.collection(kid: "k9").sign(Fixtures.claims(), kid: "k9")
        let keys = await Fixtures.collection(kid: "k1")  // the first key added is also the default
        let claims = try await keys.verify(token, as: AccessTokenClaims.self)
        #expect(claims.userID == "usr_test")
    }

    @Test func jwtKitIgnoresTheHeaderAlgForAnHMACKey() async throws {
        let token = try await Fixtures.collection().sign(Fixtures.claims(), kid: "k1", header: ["alg": "RS256"])
        let claims = try await Fixtures.collection().verify(token, as: AccessTokenClaims.self)
        #expect(claims.userID == "usr_test")
    }

    @Test func jwtKitRefusesAnHS512SignatureOnAnHS256Key() async throws {
        let token = try await Fixtures.collection(digest: .sha512).sign(Fixtures.claims(), kid: "k1")
        await #expect(throws: JWTError.self) {
            try await Fixtures.collection().verify(token, as: AccessTokenClaims.self)
        }
    }

    @Test func withoutADefaultKeyJWTKitRefusesAnUnknownKid() async throws {
        let token = try await Fixtures.collection(kid: "k9").sign(Fixtures.claims(), kid: "k9")
        let keys = await Fixtures.collection(kid: "k1")
        await keys.clearDefault()
        await #expect(throws: JWTError.self) { try await keys.verify(token, as: AccessTokenClaims.self) }
    }
}
