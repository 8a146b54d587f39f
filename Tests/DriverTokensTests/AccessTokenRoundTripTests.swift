import DriverTokens
import Foundation
import Testing

@Suite struct AccessTokenRoundTripTests {
    @Test func otpTokenRoundTripsEveryClaim() async throws {
        let now = Fixtures.now()
        let issued = try await Fixtures.signer().sign(
            userID: "usr_42", sessionID: Fixtures.familyID, channel: .otp, now: now)
        let claims = try await Fixtures.verifier().verify(issued.token)

        #expect(claims == issued.claims)
        #expect(claims.userID == "usr_42")
        #expect(claims.sessionID == Fixtures.familyID)
        #expect(claims.channel == .otp)
        #expect(claims.issuer == Fixtures.issuer)
        #expect(claims.issuedAt == now)
        #expect(claims.expiresAt == now.addingTimeInterval(Fixtures.ttl))
        #expect(claims.tokenID.count == 32)

        let header = try Fixtures.json(of: issued.token, segment: 0)
        #expect(header["alg"] as? String == "HS256")
        #expect(header["kid"] as? String == "k1")
        #expect(header["typ"] as? String == "JWT")

        let payload = try Fixtures.json(of: issued.token, segment: 1)
        #expect(payload["partner_id"] == nil)
        #expect(payload["channel"] as? String == "otp")
        #expect(payload["sid"] as? String == Fixtures.familyID)
        #expect(payload["user_id"] as? String == "usr_42")
        #expect(payload["exp"] as? Int == Int(now.timeIntervalSince1970 + Fixtures.ttl))
        #expect(payload["iat"] as? Int == Int(now.timeIntervalSince1970))
    }

    @Test func partnerTokenCarriesPartnerID() async throws {
        let issued = try await Fixtures.signer().sign(
            userID: "usr_7", sessionID: Fixtures.familyID, channel: .partnerSDK(partnerID: "ptn_acme"))
        let claims = try await Fixtures.verifier().verify(issued.token)

        #expect(claims.channel == .partnerSDK(partnerID: "ptn_acme"))
        #expect(claims.channel.name == "partner_sdk")
        #expect(claims.channel.partnerID == "ptn_acme")
        let payload = try Fixtures.json(of: issued.token, segment: 1)
        #expect(payload["partner_id"] as? String == "ptn_acme")
        #expect(payload["channel"] as? String == "partner_sdk")
    }

    @Test func everyTokenHasItsOwnJTI() async throws {
        let signer = try await Fixtures.signer()
        var ids = Set<String>()
        for _ in 0..<200 {
            let issued = try await signer.sign(userID: "usr_1", sessionID: Fixtures.familyID, channel: .otp)
            ids.insert(issued.claims.tokenID)
        }
        #expect(ids.count == 200)
    }

    @Test func descriptionsLeakNoSecret() async throws {
        let issued = try await Fixtures.signer().sign(userID: "usr_1", sessionID: Fixtures.familyID, channel: .otp)
        #expect(!String(describing: issued).contains(issued.token))
        var dumped = ""
        dump(issued, to: &dumped)
        #expect(!dumped.contains(issued.token))

        let key = Fixtures.k1
        let secret = String(decoding: Fixtures.secret1, as: UTF8.self)
        #expect(!String(describing: key).contains(secret))
        dumped = ""
        dump(key, to: &dumped)
        #expect(!dumped.contains(secret))
    }

    @Test func signerRefusesBadInput() async throws {
        let signer = try await Fixtures.signer()
        await #expect(throws: DriverTokensError.self) {
            try await signer.sign(userID: "", sessionID: Fixtures.familyID, channel: .otp)
        }
        // A full refresh token is not a session id: it would end up readable in the JWT.
        await #expect(throws: DriverTokensError.self) {
            try await signer.sign(userID: "usr_1", sessionID: RefreshToken.newFamily().value, channel: .otp)
        }
        await #expect(throws: DriverTokensError.self) {
            try await signer.sign(userID: "usr_1", sessionID: Fixtures.familyID, channel: .partnerSDK(partnerID: ""))
        }
    }

    @Test func keysAndConfigurationAreValidated() async throws {
        #expect(throws: DriverTokensError.self) { try AccessTokenSigningKey(kid: "k1", secret: Array(repeating: 7, count: 31)) }
        #expect(throws: DriverTokensError.self) { try AccessTokenSigningKey(kid: "", secret: Fixtures.secret1) }
        #expect(throws: DriverTokensError.self) { try AccessTokenSigningKey(kid: "has space", secret: Fixtures.secret1) }
        await #expect(throws: DriverTokensError.self) { try await Fixtures.verifier([]) }
        await #expect(throws: DriverTokensError.self) { try await Fixtures.verifier([Fixtures.k1, Fixtures.k1]) }
        await #expect(throws: DriverTokensError.self) { try await Fixtures.signer(issuer: "") }
    }

    @Test func leewayIsClampedToFiveSeconds() async throws {
        #expect(try await Fixtures.verifier(leeway: 60).leeway == 5)
        #expect(try await Fixtures.verifier(leeway: -1).leeway == 0)
        #expect(try await Fixtures.verifier(leeway: 2).leeway == 2)
    }
}
