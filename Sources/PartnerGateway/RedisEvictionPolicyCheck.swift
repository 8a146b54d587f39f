import Logging
import RedisClient

/// Refuses to run against a Redis that may evict keys.
///
/// Redis is the gateway's only store: with any `maxmemory-policy` but `noeviction`, a full
/// Redis would silently drop partners, keys, users, sessions, and also the records that
/// make a consumed refresh token or a revoked key stay dead. `noeviction` instead refuses
/// writes when full, which the gateway answers with 503: the safe failure.
///
/// Checked once at start-up with `CONFIG GET maxmemory-policy`:
/// - another policy: start-up stops with ``WrongPolicy`` (one clear line, non-zero exit);
/// - an error reply (managed Redis services rename or forbid `CONFIG`): a warning, and the
///   gateway starts, since it cannot know and the operator may have set it in the console;
/// - Redis unreachable: a warning, and the gateway starts as it always has (it serves
///   `/healthz`, answers 503 on `/readyz` and Redis-backed calls, and recovers by itself
///   once Redis is up); the policy is then not checked.
struct RedisEvictionPolicyCheck {
    let redis: RedisConnectionPool
    let logger: Logger

    struct WrongPolicy: Error, CustomStringConvertible {
        let policy: String
        var description: String {
            "redis maxmemory-policy is \"\(policy)\", but the gateway needs \"noeviction\": any other policy lets Redis evict partners, keys, sessions and revocations when memory is full (set maxmemory-policy noeviction, as config/redis.conf does)"
        }
    }

    func run() async throws {
        let reply: RedisValue
        do {
            reply = try await redis.send("CONFIG", "GET", "maxmemory-policy")
        } catch let error as RedisError where error.isServer {
            logger.warning("cannot check redis maxmemory-policy (CONFIG is not permitted: \(error.detail)); make sure it is noeviction")
            return
        } catch {
            logger.warning("cannot check redis maxmemory-policy (redis unreachable at start-up: \(error)); starting anyway")
            return
        }
        guard let pair = reply.array, pair.count == 2, let policy = pair[1].string else {
            logger.warning("cannot check redis maxmemory-policy (unexpected reply to CONFIG GET); make sure it is noeviction")
            return
        }
        guard policy.lowercased() == "noeviction" else { throw WrongPolicy(policy: policy) }
    }
}
