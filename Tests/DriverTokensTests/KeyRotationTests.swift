import DriverTokens
import Foundation
import Testing

/// Secret rotation: the first key signs, every key verifies.
@Suite struct KeyRotationTests {
    @Test func oldTokensStillVerifyAfterANewKeyIsPutFirst() async throws {
        let oldToken = try await Fixtures.signer([Fixtures.k1]).sign(
            userID: "usr_1", sessionID: Fixtures.familyID, channel: .otp)

        let rotated = [Fixtures.k2, Fixtures.k1]
        let verifier = try await Fixtures.verifier(rotated)
        #expect(try await verifier.verify(oldToken.token) == oldToken.claims)

        let signer = try await Fixtures.signer(rotated)
        #expect(signer.keyID == "k2")
        let newToken = try await signer.sign(userID: "usr_1", sessionID: Fixtures.familyID, channel: .otp)
        #expect(try Fixtures.json(of: newToken.token, segment: 0)["kid"] as? String == "k2")
        #expect(try await verifier.verify(newToken.token) == newToken.claims)
    }

    @Test func droppingTheOldKeyRefusesItsTokens() async throws {
        let oldToken = try await Fixtures.signer([Fixtures.k1]).sign(
            userID: "usr_1", sessionID: Fixtures.familyID, channel: .otp)
        let verifier = try await Fixtures.verifier([Fixtures.k2])
        await #expect(throws: AccessTokenError.unknownKeyID) { try await verifier.verify(oldToken.token) }
    }

    @Test func aKnownKidDoesNotLetAnotherKeysSignatureThrough() async throws {
        // Signed with k2's secret but labelled k1: the label picks the key, so it must fail.
        let mislabelled = try await Fixtures.collection(secret: Fixtures.secret2, kid: "k1")
            .sign(Fixtures.claims(), kid: "k1")
        let verifier = try await Fixtures.verifier([Fixtures.k2, Fixtures.k1])
        await #expect(throws: AccessTokenError.badSignature) { try await verifier.verify(mislabelled) }
    }
}
