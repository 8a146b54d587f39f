import GatewayPrimitives
import Logging
import NIOCore
import RedisClient

/// The Redis side of `Idempotency-Key`: the record's name, and its three scripts
/// (``IdempotencyScripts``) run on a connection of the request's own loop. A Redis failure
/// fails the future: the caller answers `503` (lock) or leaves the record to expire.
package struct IdempotencyStore: Sendable {
    package let secrets: IdempotencySecrets
    private let redis: RedisConnectionPool

    package init(redis: RedisConnectionPool, secrets: IdempotencySecrets) {
        self.redis = redis
        self.secrets = secrets
    }

    package func lock(_ recordKey: String, fingerprint: String, owner: String, lifetime: Duration, on eventLoop: any EventLoop) -> EventLoopFuture<IdempotencyLock> {
        run(IdempotencyScripts.lock, recordKey, [fingerprint, owner, String(max(1, lifetime.inMilliseconds))], on: eventLoop).flatMapThrowing { reply -> IdempotencyLock in
            let parts = reply.array ?? []
            switch parts.first?.string {
            case "go": return .acquired
            case "flight": return .inFlight
            case "mismatch": return .mismatch
            case "stored":
                guard parts.count == 2, case .bulkString(let sealed) = parts[1] else { throw RedisError.server("idempotency-lock: a stored record without its response") }
                return .stored(sealed: sealed)
            default:
                throw RedisError.server("idempotency-lock: unexpected reply")
            }
        }
    }

    /// Stores `sealed` for `lifetime` if `owner` still holds the key; true when stored.
    package func store(_ recordKey: String, sealed: String, owner: String, lifetime: Duration, on eventLoop: any EventLoop) -> EventLoopFuture<Bool> {
        run(IdempotencyScripts.store, recordKey, [owner, sealed, String(max(1, lifetime.inMilliseconds))], on: eventLoop).map { $0.int == 1 }
    }

    package func release(_ recordKey: String, owner: String, on eventLoop: any EventLoop) -> EventLoopFuture<Bool> {
        run(IdempotencyScripts.release, recordKey, [owner], on: eventLoop).map { $0.int == 1 }
    }

    private func run(_ script: RedisScript, _ recordKey: String, _ arguments: [String], on eventLoop: any EventLoop) -> EventLoopFuture<RedisValue> {
        do {
            let call = try RedisScriptCall(script, keys: [recordKey], arguments: arguments)
            return redis.run(call, on: eventLoop, tracedUnder: redis.currentTraceParent())
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
    }
}
