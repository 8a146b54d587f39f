import GatewayPrimitives
import Logging
import NIOCore
import RedisClient

/// The Redis side of `Idempotency-Key`: the record's name, taking its lock (one `SET … NX
/// GET`), and storing or freeing it (``IdempotencyScripts``), run on a connection of the
/// request's own loop. A Redis failure fails the future: the caller answers `503` (lock) or
/// leaves the record to expire.
package struct IdempotencyStore: Sendable {
    package let secrets: IdempotencySecrets
    private let redis: RedisConnectionPool

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

    /// Stores `storedValue` for `lifetime` if the record still holds `lockValue`, and hands
    /// `stored` whether it did.
    package func store(
        _ recordKey: String, lockValue: String, storedValue: [UInt8], lifetime: Duration, on eventLoop: any EventLoop,
        stored: @escaping @Sendable (Result<Bool, any Error>) -> Void
    ) {
        let arguments = [Array(lockValue.utf8), storedValue, Array(String(max(1, lifetime.inMilliseconds)).utf8)]
        run(IdempotencyScripts.store, recordKey, arguments, on: eventLoop) { result in
            stored(result.map { $0.int == 1 })
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
