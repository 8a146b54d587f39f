import Crypto
import Foundation
import Synchronization

/// Remembers access tokens that passed full verification, until they expire.
///
/// Checking HMAC and decoding JSON costs far more than a hash and a lookup, and a driver's app
/// presents the same token on every call, so the proxy's hot path becomes one SHA-256 and one
/// dictionary lookup under a lock, with no async hop.
///
/// Entries are keyed by the SHA-256 of the whole token, not by its signature segment: an
/// attacker can pair a valid signature with any header and payload, and only a key that
/// covers all three parts makes a hit imply "this exact string was verified". Hashing
/// also keeps each key at 32 bytes whatever the token's length.
///
/// The cache knows nothing about revocation: the server must still check `sid` and the user
/// against its revocation list on every request, hit or miss.
public final class VerifiedTokenCache: Sendable {
    /// Most entries held; the oldest is dropped to make room.
    public let capacity: Int
    /// Seconds past `exp` an entry is still served, the verifier's leeway.
    public let leeway: TimeInterval

    private let state: Mutex<State>

    /// - Parameters:
    ///   - capacity: at least 1. About 100 bytes plus the claims' strings per entry.
    ///   - leeway: clamped to `0...AccessTokenVerifier.maximumLeeway`.
    public init(capacity: Int = 100_000, leeway: TimeInterval = AccessTokenVerifier.maximumLeeway) {
        self.capacity = max(1, capacity)
        self.leeway = AccessTokenVerifier.clampedLeeway(leeway)
        self.state = Mutex(State())
    }

    /// The claims of `token` if it was verified before and has not expired at `now`.
    public func claims(for token: String, now: Date = Date()) -> AccessTokenClaims? {
        let key = Self.key(for: token)
        let leeway = self.leeway
        return state.withLock { state in
            guard let entry = state.entries[key] else { return nil }
            if entry.claims.isUnexpired(at: now, leeway: leeway) { return entry.claims }
            state.remove(key)
            return nil
        }
    }

    /// Records that `token` verified to `claims`. Call only after full verification.
    public func insert(_ claims: AccessTokenClaims, for token: String, now: Date = Date()) {
        guard claims.isUnexpired(at: now, leeway: leeway) else { return }
        let key = Self.key(for: token)
        let capacity = self.capacity
        state.withLock { $0.insert(claims, for: key, capacity: capacity) }
    }

    /// Drops every entry expired at `now` and says how many went. The server may call it
    /// from a timer; without it, expired entries only go when looked up or pushed out.
    @discardableResult
    public func removeExpired(now: Date = Date()) -> Int {
        let leeway = self.leeway
        return state.withLock { state in
            let expired = state.entries.filter { !$0.value.claims.isUnexpired(at: now, leeway: leeway) }
            for key in expired.keys { state.remove(key) }
            return expired.count
        }
    }

    /// Drops everything. Verified claims never go stale before `exp`, so this is for tests
    /// and memory pressure, not correctness.
    public func removeAll() {
        state.withLock { $0 = State() }
    }

    /// Entries currently held (expired ones included until they are removed).
    public var count: Int {
        state.withLock { $0.entries.count }
    }

    private static func key(for token: String) -> SHA256Digest {
        token.utf8.withContiguousStorageIfAvailable { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
            ?? SHA256.hash(data: Array(token.utf8))
    }

    /// Entries plus a ring of their keys in insertion order.
    ///
    /// The ring makes eviction O(1): when full, the slot about to be reused holds the
    /// oldest entry. All tokens share one lifetime, so the oldest inserted is also (nearly)
    /// the first to expire, which is why no expiry-ordered heap is needed.
    private struct State {
        var entries: [SHA256Digest: Entry] = [:]
        var ring: [SHA256Digest?] = []
        var next = 0

        struct Entry {
            var claims: AccessTokenClaims
            var slot: Int
        }

        mutating func insert(_ claims: AccessTokenClaims, for key: SHA256Digest, capacity: Int) {
            // Two requests that missed at once both verify and insert; one entry suffices.
            guard entries[key] == nil else { return }
            if ring.count < capacity {
                ring.append(key)
                entries[key] = Entry(claims: claims, slot: ring.count - 1)
                return
            }
            if let oldest = ring[next] { entries[oldest] = nil }
            ring[next] = key
            entries[key] = Entry(claims: claims, slot: next)
            next = (next + 1) % capacity
        }

        mutating func remove(_ key: SHA256Digest) {
            guard let entry = entries.removeValue(forKey: key) else { return }
            ring[entry.slot] = nil
        }
    }
}
