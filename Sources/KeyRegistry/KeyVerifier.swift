import Foundation
import Logging
import RedisClient
import Synchronization

/// Verifies presented API keys, from an in-process cache whenever it can.
///
/// A partner's request costs no Redis round trip for its key once the key has been seen: the
/// verified record and its partner are cached by hash. Entries are dropped when an
/// invalidation arrives over pub/sub (rotate, revoke, partner disable: within milliseconds on
/// every instance), when the subscription is lost or re-established (messages may have been
/// missed), and in any case after ``cacheLifetime``.
///
/// Every refusal of an unusable key (malformed, unknown, revoked, expired) is the same
/// ``Verification/invalid``. A malformed key is refused before any lookup; an unknown one after
/// a lookup by SHA-256, which compares no secret, so response time reveals nothing about
/// stored keys (only whether the checksum was right, which anyone can compute).
public final class KeyVerifier: Sendable {
    public enum Verification: Sendable, Hashable {
        case valid(KeyRecord, Partner)
        /// Malformed, unknown, revoked or expired: 401 `INVALID_API_KEY`.
        case invalid
        /// The key is good but its partner is disabled, or it lacks the scope: 403 `FORBIDDEN`.
        case forbidden(KeyRecord, Partner)
    }

    /// How long an entry may be trusted without an invalidation message.
    public let cacheLifetime: Duration
    /// How often a key's `last_used_at` is written at most, per instance.
    public let touchInterval: TimeInterval
    /// Entries older than this are re-read in the background while still being served.
    private let refreshAfter: Duration
    private let registry: KeyRegistry
    private let cache = Mutex(Cache())
    /// Bumped with the cache's epoch by every invalidation, readable without the lock: a
    /// caller's ``Remembered`` verification holds only while it has not moved.
    private let generation = Atomic<UInt64>(0)
    private let logger: Logger
    /// Told whether each lookup found the key in the cache (for the gateway's metrics).
    private let cacheLookups: (@Sendable (_ hit: Bool) -> Void)?

    private struct Cache: ~Copyable {
        struct KeyEntry { var record: KeyRecord; var fetched: ContinuousClock.Instant; var touched: Date?; var refreshing = false }
        struct PartnerEntry { var partner: Partner; var fetched: ContinuousClock.Instant; var refreshing = false }
        var keys: [String: KeyEntry] = [:]
        var partners: [String: PartnerEntry] = [:]
        /// Bumped by every invalidation; a lookup that started in an older epoch does not
        /// cache its response, which might predate the invalidation.
        var epoch: UInt64 = 0
    }

    public init(
        registry: KeyRegistry, cacheLifetime: Duration = .seconds(5), touchInterval: TimeInterval = 60, logger: Logger = Logger(label: "keys"),
        cacheLookups: (@Sendable (_ hit: Bool) -> Void)? = nil
    ) {
        self.registry = registry
        self.cacheLookups = cacheLookups
        self.cacheLifetime = cacheLifetime
        self.refreshAfter = cacheLifetime * 4 / 5
        self.touchInterval = touchInterval
        self.logger = logger
    }

    /// Checks `presented` (the `X-API-Key` header) and, when given, that it carries `scope`.
    /// Throws only when Redis is needed and cannot answer.
    public func verify(_ presented: String, scope: String?, now: Date = Date()) async throws -> Verification {
        guard let key = APIKey(presented) else { return .invalid }
        let hash = key.hash
        let cached = cachedEntries(hash: hash)
        cacheLookups?(cached.record != nil)
        let record: KeyRecord
        if let cachedRecord = cached.record {
            record = cachedRecord
        } else {
            guard let fetched = try await registry.key(hash: hash) else { return .invalid }
            record = fetched
            cache.withLock { cache in
                if cache.epoch == cached.epoch { cache.keys[hash] = .init(record: fetched, fetched: cached.clock, touched: nil) }
            }
        }
        guard record.isUsable(at: now) else { return .invalid }
        let partner: Partner
        if let cachedPartner = cached.partner {
            partner = cachedPartner
        } else {
            guard let fetched = try await registry.partner(record.partnerID) else { return .invalid }
            partner = fetched
            cache.withLock { cache in
                if cache.epoch == cached.epoch { cache.partners[fetched.id] = .init(partner: fetched, fetched: cached.clock) }
            }
        }
        return verdict(record: record, partner: partner, hash: hash, scope: scope, now: now)
    }

    /// ``verify(_:scope:now:)`` when both the key and its partner are cached, answered
    /// synchronously (the proxy engine's event loop asks this first); nil when Redis would
    /// have to be asked.
    public func cachedVerification(_ presented: String, scope: String?, now: Date = Date()) -> Verification? {
        guard let key = APIKey(presented) else { return .invalid }
        return cachedVerification(keyHash: key.hash, scope: scope, now: now)
    }

    /// ``cachedVerification(_:scope:now:)`` for a well-formed key known by its ``APIKey/hash``
    /// (a caller that saw the same key before skips parsing and hashing it again).
    public func cachedVerification(keyHash hash: String, scope: String?, now: Date = Date()) -> Verification? {
        let cached = cachedEntries(hash: hash)
        guard let record = cached.record else { return nil }
        guard record.isUsable(at: now) else { return .invalid }
        guard let partner = cached.partner else { return nil }
        // Only a hit is counted here: a miss goes on to verify(_:scope:now:), which counts it.
        cacheLookups?(true)
        return verdict(record: record, partner: partner, hash: hash, scope: scope, now: now)
    }

    /// ``cachedVerification(keyHash:scope:now:)`` for a caller that sees the same key over and
    /// over (the proxy engine, per client connection) and keeps the last good answer in
    /// `remembered`: while no invalidation arrived since (a revocation, rotation or partner
    /// change reaches every instance as one), for at most ``rememberedFor``, and while the key
    /// has not expired, it is the response without the cache's lock and lookups. Counted as a
    /// cache hit like any other; the key's `last_used_at` is still written, from the full
    /// check that renews the memo.
    public func cachedVerification(keyHash hash: String, scope: String?, remembered: inout Remembered?, now: Date = Date()) -> Verification? {
        let clock = ContinuousClock.now
        if let last = remembered, clock < last.until, last.generation == generation.load(ordering: .acquiring),
           last.hash == hash, last.scope == scope, last.record.isUsable(at: now) {
            cacheLookups?(true)
            return .valid(last.record, last.partner)
        }
        let generation = self.generation.load(ordering: .acquiring)
        let verification = cachedVerification(keyHash: hash, scope: scope, now: now)
        if case .valid(let record, let partner) = verification {
            remembered = Remembered(hash: hash, scope: scope, record: record, partner: partner, generation: generation, until: clock + Self.rememberedFor)
        } else {
            remembered = nil
        }
        return verification
    }

    /// How long a caller's remembered verification holds at most without asking the cache.
    public static let rememberedFor = Duration.seconds(1)

    /// A good key's verification as a caller keeps it (``cachedVerification(keyHash:scope:remembered:now:)``);
    /// a class, so that checking it costs one retain rather than one per field of the key and partner.
    public final class Remembered: Sendable {
        let hash: String
        let scope: String?
        let record: KeyRecord
        let partner: Partner
        let generation: UInt64
        let until: ContinuousClock.Instant

        init(hash: String, scope: String?, record: KeyRecord, partner: Partner, generation: UInt64, until: ContinuousClock.Instant) {
            self.hash = hash
            self.scope = scope
            self.record = record
            self.partner = partner
            self.generation = generation
            self.until = until
        }
    }

    /// What the cache holds for a key hash, and the epoch and time of the lookup.
    private struct CachedEntries {
        let record: KeyRecord?
        let partner: Partner?
        let epoch: UInt64
        let clock: ContinuousClock.Instant
    }

    /// The cached record and partner of `hash`. The cache is read and updated in place (by
    /// dictionary index), so a hit copies each cached value once: reference counting is the
    /// largest cost on this path. Entries near the end of their lifetime are re-read in
    /// the background while still being served, so steady traffic never sees a miss (and many
    /// concurrent requests never all wait on Redis at once when an entry expires).
    private func cachedEntries(hash: String) -> CachedEntries {
        let clock = ContinuousClock.now
        let (record, partner, epoch, refreshKey, refreshPartner) = cache.withLock { cache -> (KeyRecord?, Partner?, UInt64, Bool, String?) in
            var refreshKey = false
            var refreshPartner: String?
            var record: KeyRecord?
            if let index = cache.keys.index(forKey: hash) {
                let age = clock - cache.keys.values[index].fetched
                if age < cacheLifetime {
                    record = cache.keys.values[index].record
                    if age > refreshAfter, !cache.keys.values[index].refreshing {
                        cache.keys.values[index].refreshing = true
                        refreshKey = true
                    }
                }
            }
            var partner: Partner?
            if let partnerID = record?.partnerID, let index = cache.partners.index(forKey: partnerID) {
                let age = clock - cache.partners.values[index].fetched
                if age < cacheLifetime {
                    partner = cache.partners.values[index].partner
                    if age > refreshAfter, !cache.partners.values[index].refreshing {
                        cache.partners.values[index].refreshing = true
                        refreshPartner = partnerID
                    }
                }
            }
            return (record, partner, cache.epoch, refreshKey, refreshPartner)
        }
        if refreshKey || refreshPartner != nil {
            refreshInBackground(hash: refreshKey ? hash : nil, partnerID: refreshPartner, epoch: epoch)
        }
        return CachedEntries(record: record, partner: partner, epoch: epoch, clock: clock)
    }

    /// The response for a usable record and its partner.
    private func verdict(record: KeyRecord, partner: Partner, hash: String, scope: String?, now: Date) -> Verification {
        touchIfDue(hash: hash, now: now)
        guard partner.status == .active else { return .forbidden(record, partner) }
        if let scope, !scope.isEmpty, !record.scopes.contains(scope) { return .forbidden(record, partner) }
        return .valid(record, partner)
    }

    private func refreshInBackground(hash: String?, partnerID: String?, epoch: UInt64) {
        Task { [self] in
            var record: KeyRecord?
            if let hash { record = try? await registry.key(hash: hash) }
            var partner: Partner?
            if let partnerID { partner = try? await registry.partner(partnerID) }
            let fetched = ContinuousClock.now
            cache.withLock { cache in
                if let hash {
                    if cache.epoch == epoch, let record {
                        let touched = cache.keys[hash]?.touched
                        cache.keys[hash] = .init(record: record, fetched: fetched, touched: touched)
                    } else {
                        cache.keys[hash]?.refreshing = false
                    }
                }
                if let partnerID {
                    if cache.epoch == epoch, let partner {
                        cache.partners[partnerID] = .init(partner: partner, fetched: fetched)
                    } else {
                        cache.partners[partnerID]?.refreshing = false
                    }
                }
            }
        }
    }

    /// Drops one key's cached record, as its `key <hash>` message would: for the instance that
    /// changed the key, so the change holds here before its own message comes back.
    public func invalidate(keyHash: String) {
        invalidate("key \(keyHash)")
    }

    /// Drops one partner's cached record, as its `partner <id>` message would.
    public func invalidate(partnerID: String) {
        invalidate("partner \(partnerID)")
    }

    /// How many invalidations this instance has applied: a caller that took a key's answer when
    /// it read `n` knows a change may have come since when it reads more.
    public var invalidations: UInt64 { generation.load(ordering: .acquiring) }

    /// Handles one `pg:invalidate` message (`key <hash>`, `partner <id>`).
    public func invalidate(_ message: String) {
        let parts = message.split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { return }
        let target = String(parts[1])
        cache.withLock { cache in
            cache.epoch &+= 1
            generation.add(1, ordering: .releasing)
            switch parts[0] {
            case "key": cache.keys[target] = nil
            case "partner": cache.partners[target] = nil
            default: break
            }
        }
    }

    /// Drops everything (the subscription was lost or re-established).
    public func reset() {
        cache.withLock { cache in
            cache.epoch &+= 1
            generation.add(1, ordering: .releasing)
            cache.keys.removeAll()
            cache.partners.removeAll()
        }
    }

    /// Writes `last_used_at` in the background at most once per ``touchInterval`` per key, so a
    /// busy key costs no Redis write per request and a request never waits for it.
    private func touchIfDue(hash: String, now: Date) {
        let due = cache.withLock { cache -> Bool in
            guard let index = cache.keys.index(forKey: hash) else { return false }
            if let touched = cache.keys.values[index].touched, now.timeIntervalSince(touched) < touchInterval { return false }
            cache.keys.values[index].touched = now
            return true
        }
        guard due else { return }
        let registry = self.registry
        let logger = self.logger
        Task {
            do {
                try await registry.touch(hash: hash, at: now)
            } catch {
                logger.debug("could not record key use", metadata: ["error": "\(error)"])
            }
        }
    }
}
