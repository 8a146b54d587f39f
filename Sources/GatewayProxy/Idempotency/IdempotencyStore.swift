import GatewayPrimitives
import Logging
import NIOCore
import RedisClient

/// The Redis side of `Idempotency-Key`: the record's name, taking its lock (one `SET … NX
/// GET`), renewing it, storing the answer over it (one `SET … XX GET`) or freeing it
/// (``IdempotencyScripts``), listing it under its user (``IdempotencyUserIndex``), run on a
/// connection of the request's own loop. A Redis failure
/// fails the call: the caller answers `503` (lock) or leaves the record to expire.
package struct IdempotencyStore: Sendable {
    package let secrets: IdempotencySecrets
    let redis: RedisConnectionPool

    package init(redis: RedisConnectionPool, secrets: IdempotencySecrets) {
        self.redis = redis
        self.secrets = secrets
    }

    /// Takes the lock (``IdempotencyRecord/lock(fingerprint:owner:)``) for `lifetime` unless
    /// the record exists, and hands `found` what was there, on `eventLoop`.
    package func lock(
        _ recordKey: String, fingerprint: String, lockValue: String, lifetime: Duration, on eventLoop: any EventLoop,
        found: @escaping @Sendable (Result<IdempotencyLock, any Error>) -> Void
    ) {
        // Like a script, the lock waits for `redis.wait_replicas`: a lock lost in a failover
        // would let a second request through.
        let command = RedisCommand.setIfAbsentGettingOld(recordKey, lockValue, expiry: lifetime)
        redis.run(command, waitsForReplicas: true, on: eventLoop, tracedUnder: redis.currentTraceParent()) { result in
            found(result.flatMap { reply in Result { try Self.lock(from: reply, fingerprint: fingerprint) } })
        }
    }

    private static func lock(from reply: RedisValue, fingerprint: String) throws -> IdempotencyLock {
        let found: IdempotencyLock?
        switch try reply.throwingServerError() {
        case .null: found = .acquired
        case .bulkString(let value): found = IdempotencyRecord.found(value, fingerprint: fingerprint)
        default: found = nil
        }
        guard let found else { throw RedisError.server("idempotency lock: an unreadable record") }
        return found
    }

    /// What storing found in the record.
    package enum Stored: Equatable, Sendable {
        /// The record held this request's lock: the answer replaced it.
        case stored
        /// The record was gone (the lock expired): nothing was stored.
        case expired
        /// The record held something else (the lock was lost and the key taken again): the
        /// answer replaced it, as a second forwarded request's store would have.
        case replacedOther
    }

    /// Replaces the record with `storedValue` for `lifetime` if it still exists, and hands
    /// `stored` what it held. A native `SET … XX GET` rather than an owner-checked script:
    /// while the lock holds, only its owner writes the record, so the check could only matter
    /// once the lock is lost, when the key has been forwarded twice anyway (docs/DECISIONS.md).
    package func store(
        _ recordKey: String, lockValue: String, storedValue: [UInt8], lifetime: Duration, on eventLoop: any EventLoop,
        stored: @escaping @Sendable (Result<Stored, any Error>) -> Void
    ) {
        let command = RedisCommand.replaceGettingOld(recordKey, storedValue, expiry: lifetime)
        redis.run(command, waitsForReplicas: true, on: eventLoop, tracedUnder: redis.currentTraceParent()) { result in
            stored(result.flatMap { reply in
                Result {
                    switch try reply.throwingServerError() {
                    case .null: return .expired
                    case .bulkString(let held): return held.elementsEqual(lockValue.utf8) ? .stored : .replacedOther
                    default: throw RedisError.server("idempotency store: an unreadable reply")
                    }
                }
            })
        }
    }

    /// Starts the lock's `lifetime` again if the record still holds `lockValue`; `renewed`
    /// hears whether it did.
    package func renew(
        _ recordKey: String, lockValue: String, lifetime: Duration, on eventLoop: any EventLoop,
        renewed: @escaping @Sendable (Result<Bool, any Error>) -> Void
    ) {
        run(IdempotencyScripts.renew, recordKey, [Array(lockValue.utf8), Array(String(lifetime.inMilliseconds).utf8)], on: eventLoop) { result in
            renewed(result.flatMap { reply in Result { try reply.throwingServerError().int == 1 } })
        }
    }

    /// Frees the record if it still holds `lockValue`; `failed` hears why it could not.
    package func release(_ recordKey: String, lockValue: String, on eventLoop: any EventLoop, failed: @escaping @Sendable (any Error) -> Void) {
        run(IdempotencyScripts.release, recordKey, [Array(lockValue.utf8)], on: eventLoop) { result in
            if case .failure(let error) = result { failed(error) }
        }
    }

    private func run(
        _ script: RedisScript, _ recordKey: String, _ arguments: [[UInt8]], on eventLoop: any EventLoop,
        replied: @escaping RedisConnectionPool.Replied
    ) {
        do {
            let call = try RedisScriptCall(script, keys: [recordKey], bytes: arguments)
            redis.run(call, on: eventLoop, tracedUnder: redis.currentTraceParent(), replied: replied)
        } catch {
            replied(.failure(error))
        }
    }
}
