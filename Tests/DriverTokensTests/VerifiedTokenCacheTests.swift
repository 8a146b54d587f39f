import DriverTokens
import Foundation
import Testing

@Suite struct VerifiedTokenCacheTests {
    private func issue(_ count: Int = 1) async throws -> [IssuedAccessToken] {
        let signer = try await Fixtures.signer()
        var tokens: [IssuedAccessToken] = []
        for index in 0..<count {
            tokens.append(try await signer.sign(userID: "usr_\(index)", sessionID: Fixtures.familyID, channel: .otp))
        }
        return tokens
    }

    @Test func verifiedTokenIsServedFromTheCache() async throws {
        let verifier = try await Fixtures.verifier()
        let issued = try await issue()[0]
        #expect(verifier.cachedClaims(for: issued.token) == nil)
        let claims = try await verifier.verify(issued.token)
        #expect(verifier.cachedClaims(for: issued.token) == claims)
        #expect(verifier.cache.count == 1)
        #expect(try await verifier.verify(issued.token) == claims)
        #expect(verifier.cache.count == 1)
    }

    @Test func expiredEntryIsNotReturned() async throws {
        let cache = VerifiedTokenCache(capacity: 10, leeway: 5)
        let issued = try await issue()[0]
        cache.insert(issued.claims, for: issued.token)
        let exp = issued.claims.expiresAt
        #expect(cache.claims(for: issued.token, now: exp.addingTimeInterval(4)) == issued.claims)
        #expect(cache.claims(for: issued.token, now: exp.addingTimeInterval(5)) == nil)
        #expect(cache.count == 0)
    }

    @Test func removeExpiredSweeps() async throws {
        let cache = VerifiedTokenCache(capacity: 10, leeway: 0)
        for issued in try await issue(3) { cache.insert(issued.claims, for: issued.token) }
        #expect(cache.count == 3)
        #expect(cache.removeExpired(now: Date().addingTimeInterval(Fixtures.ttl + 10)) == 3)
        #expect(cache.count == 0)
    }

    @Test func alreadyExpiredClaimsAreNotInserted() async throws {
        let cache = VerifiedTokenCache(capacity: 10, leeway: 0)
        let issued = try await issue()[0]
        cache.insert(issued.claims, for: issued.token, now: issued.claims.expiresAt)
        #expect(cache.count == 0)
    }

    @Test func sameSignatureWithAnotherPayloadIsNotServed() async throws {
        let verifier = try await Fixtures.verifier()
        let issued = try await issue()[0]
        _ = try await verifier.verify(issued.token)

        let payload = String(decoding: try JSONEncoder().encode(issued.claims), as: UTF8.self)
        let forged = Fixtures.replacing(
            segment: 1, of: issued.token, with: payload.replacingOccurrences(of: "usr_0", with: "usr_admin"))
        #expect(forged.split(separator: ".")[2] == issued.token.split(separator: ".")[2])
        #expect(verifier.cachedClaims(for: forged) == nil)
        await #expect(throws: AccessTokenError.badSignature) { try await verifier.verify(forged) }

        let forgedHeader = Fixtures.replacing(segment: 0, of: issued.token, with: #"{"alg":"HS256","kid":"k1"}"#)
        #expect(verifier.cachedClaims(for: forgedHeader) == nil)
        await #expect(throws: AccessTokenError.badSignature) { try await verifier.verify(forgedHeader) }
    }

    @Test func fullCacheDropsTheOldest() async throws {
        let cache = VerifiedTokenCache(capacity: 3)
        let tokens = try await issue(5)
        for issued in tokens { cache.insert(issued.claims, for: issued.token) }
        #expect(cache.count == 3)
        #expect(cache.claims(for: tokens[0].token) == nil)
        #expect(cache.claims(for: tokens[1].token) == nil)
        for issued in tokens[2...] { #expect(cache.claims(for: issued.token) == issued.claims) }
        // A slot freed by expiry or removal does not break the ring.
        cache.removeAll()
        #expect(cache.count == 0)
        for issued in tokens { cache.insert(issued.claims, for: issued.token) }
        #expect(cache.count == 3)
    }

    @Test func concurrentUseIsSafe() async throws {
        let verifier = try await Fixtures.verifier(cacheCapacity: 50)
        let tokens = try await issue(100)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for round in 0..<4 {
                for issued in tokens {
                    group.addTask {
                        let claims = try await verifier.verify(issued.token)
                        #expect(claims == issued.claims, "round \(round)")
                        if let cached = verifier.cachedClaims(for: issued.token) {
                            #expect(cached == issued.claims)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(verifier.cache.count <= 50)
    }
}
