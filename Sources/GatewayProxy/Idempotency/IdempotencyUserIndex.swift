import GatewayPrimitives
import NIOCore
import RedisClient

/// The `Idempotency-Key` records of a driver's requests, listed under the user so that erasing
/// the driver finds them: a record's name is an HMAC, and its sealed answer may hold whatever
/// the upstream said about them. A sorted set in the user's slot, each record scored by when
/// it expires at the latest, so the set only holds records that may still exist.
package enum IdempotencyUserIndex {
    /// `pg:idem-user:{<user id>}`: outside `pg:idem:*`, in the user's slot.
    package static func key(userID: String) -> String { "pg:idem-user:{\(userID)}" }

    /// Lists `recordKey` under `userID` for `lifetime`; sent beside the lock or its renewal, not
    /// waited for. A failure is only logged by `failed`: the record then expires unlisted.
    static func add(
        _ recordKey: String, userID: String, lifetime: Duration, redis: RedisConnectionPool, on eventLoop: any EventLoop,
        failed: @escaping @Sendable (any Error) -> Void
    ) {
        do {
            let call = try RedisScriptCall(IdempotencyScripts.index, keys: [key(userID: userID)], arguments: [recordKey, String(lifetime.inMilliseconds)])
            redis.run(call, on: eventLoop, tracedUnder: redis.currentTraceParent()) { result in
                if case .failure(let error) = result { failed(error) }
            }
        } catch {
            failed(error)
        }
    }

    /// Deletes every record listed under `userID`, then the index; safe to repeat. Each
    /// record is in a slot of its own, so one `DEL` each (Redis Cluster refuses a multi-slot one).
    package static func erase(userID: String, redis: RedisConnectionPool) async throws {
        let index = key(userID: userID)
        let records = try await redis.send(.zrange(index, 0, -1)).throwingServerError().array?.compactMap(\.string) ?? []
        for record in records where record.hasPrefix(IdempotencySecrets.keyPrefix) {
            _ = try await redis.send(.del([record]))
        }
        _ = try await redis.send(.del([index]))
    }
}
