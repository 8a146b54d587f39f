import Crypto
import Foundation
import GatewayObservability
import GatewayPrimitives
import JWTKit
import Synchronization

/// Signs the `X-Gateway-Assertion` (docs/DECISIONS.md, "The signed assertion") with the
/// gateway's own ES256 key, and hands out the public keys for `/.well-known/jwks.json`.
///
/// An ECDSA signature costs far more than proxying a small request, so one assertion per
/// (sub, channel, partner id, route) is kept and reused while it has more than a minute left
/// (half its lifetime for lifetimes under two minutes). The cache is bounded: past
/// `capacity` entries it starts over, which only costs a few signatures.
package final class AssertionSigner: Sendable {
    /// One ES256 key and its `kid`.
    package struct SigningKey: Sendable {
        package let kid: String
        package let privateKey: ES256PrivateKey

        package init(kid: String, privateKey: ES256PrivateKey) {
            self.kid = kid
            self.privateKey = privateKey
        }
    }

    /// The `kid` of the key that signs (the first configured one).
    package let keyID: String
    package let issuer: String
    /// Seconds from `iat` to `exp`.
    package let timeToLive: Int64
    /// Seconds an assertion must still have left to be handed out again.
    package let reuseMargin: Int64
    /// Every key's public half, the signing key first.
    package let jwks: AssertionJWKS
    package let capacity: Int

    private let keys: JWTKeyCollection
    private let cache: Mutex<[CacheKey: Cached]>

    fileprivate struct CacheKey: Hashable {
        package let subject: String
        package let channel: String
        package let partnerID: String?
        package let audience: String
    }

    private struct Cached {
        package let token: String
        package let expiresAt: Int64
    }

    /// - Parameters:
    ///   - keys: ordered keys, at least one; the first signs, all are published.
    ///   - timeToLive: seconds, 1...300.
    package init(keys: [SigningKey], issuer: String, timeToLive: Int64, capacity: Int = 100_000) async throws {
        guard let first = keys.first else { throw AssertionSignerError("at least one assertion key is needed") }
        let collection = JWTKeyCollection()
        var published: [AssertionJWKS.Key] = []
        for key in keys {
            await collection.add(ecdsa: key.privateKey, kid: JWKIdentifier(string: key.kid))
            guard let parameters = key.privateKey.parameters else {
                throw AssertionSignerError("assertion key \"\(key.kid)\" has no public point")
            }
            published.append(AssertionJWKS.Key(x: parameters.x, y: parameters.y, kid: key.kid))
        }
        // No default key: every signature names its kid.
        await collection.clearDefault()
        self.keys = collection
        self.keyID = first.kid
        self.issuer = issuer
        self.timeToLive = max(1, min(timeToLive, 300))
        self.reuseMargin = min(60, self.timeToLive / 2)
        self.jwks = AssertionJWKS(keys: published)
        self.capacity = max(1, capacity)
        self.cache = Mutex([:])
    }

    /// A fresh P-256 key for a gateway configured without assertion keys; its `kid` is the
    /// first 16 hex characters of the SHA-256 of the public point's x||y bytes.
    package static func ephemeralKey() throws -> SigningKey {
        let key = P256.Signing.PrivateKey()
        let point = key.publicKey.x963Representation.dropFirst()  // drop the 0x04 prefix
        let kid = String(Hex.encode(SHA256.hash(data: point)).prefix(16))
        return SigningKey(kid: kid, privateKey: try ES256PrivateKey(backing: key))
    }

    /// The cached assertion for one caller on one route if it has enough time left; nil
    /// when one must be signed (``assertion(subject:channel:partnerID:audience:now:)``).
    ///
    /// `last` is the caller's memo of the last assertion it was given (the proxy engine keeps
    /// one per connection, which carries one caller on one route request after request): while
    /// it is for the same caller and route and has enough time left it is the response, without
    /// the shared cache's lock and key hashing.
    package func cachedAssertion(
        subject: String, channel: String, partnerID: String?, audience: String, last: inout Issued?, now: Date = Date()
    ) -> String? {
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        let cacheKey = CacheKey(subject: subject, channel: channel, partnerID: partnerID, audience: audience)
        if let last, last.expiresAt - seconds > reuseMargin, last.about == cacheKey { return last.token }
        guard let hit = cache.withLock({ $0[cacheKey] }), hit.expiresAt - seconds > reuseMargin else { return nil }
        last = Issued(about: cacheKey, token: hit.token, expiresAt: hit.expiresAt)
        return hit.token
    }

    /// An assertion handed out from the cache, and whom and which route it is about.
    package struct Issued {
        fileprivate let about: CacheKey
        package let token: String
        package let expiresAt: Int64
    }

    /// The assertion for one caller on one route, reused from the cache when it has enough
    /// time left, otherwise newly signed.
    package func assertion(subject: String, channel: String, partnerID: String?, audience: String, now: Date = Date()) async throws -> String {
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        let cacheKey = CacheKey(subject: subject, channel: channel, partnerID: partnerID, audience: audience)
        let margin = reuseMargin
        if let hit = cache.withLock({ $0[cacheKey] }), hit.expiresAt - seconds > margin {
            CacheMetrics.assertion.hit()
            return hit.token
        }
        CacheMetrics.assertion.miss()
        let claims = AssertionClaims(
            subject: subject, channel: channel, partnerID: partnerID, audience: audience,
            issuer: issuer, issuedAt: seconds, expiresAt: seconds + timeToLive
        )
        let token = try await keys.sign(claims, kid: JWKIdentifier(string: keyID))
        let capacity = self.capacity
        cache.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[cacheKey] = Cached(token: token, expiresAt: claims.expiresAt)
        }
        return token
    }
}

package struct AssertionSignerError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
