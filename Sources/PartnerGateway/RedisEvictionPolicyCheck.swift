import Foundation
import Logging
import RedisClient

/// Refuses to run against a Redis that may evict keys, or that the gateway can never use.
///
/// Redis is the gateway's only store: with any `maxmemory-policy` but `noeviction`, a full
/// Redis would silently drop partners, keys, users, sessions, and also the records that
/// make a consumed refresh token or a revoked key stay dead. `noeviction` instead refuses
/// writes when full, which the gateway answers with 503: the safe failure.
///
/// Checked once at start-up, on every primary of a cluster, with `INFO memory`, which the ACL rule in docs/redis.md permits
/// (unlike `CONFIG`, which would also reveal passwords), or `CONFIG GET maxmemory-policy`
/// where `INFO` is renamed away:
/// - another policy: start-up stops with ``Refusal`` (one clear line, non-zero exit);
/// - a certificate Redis presents that is not trusted or not for its host name, or
///   credentials Redis refuses: start-up stops too, since no retry can fix either;
/// - neither command answers the question: a warning, and the gateway starts, since it cannot
///   know and the operator may have set it in the console;
/// - Redis unreachable: a warning, and the gateway starts as it always has (it serves
///   `/healthz`, answers 503 on `/readyz` and Redis-backed calls, and recovers by itself
///   once Redis is up); the policy is then not checked.
struct RedisEvictionPolicyCheck {
    let redis: RedisConnectionPool
    let logger: Logger

    /// Why the gateway must not start; its description is the one line logged.
    struct Refusal: Error, CustomStringConvertible {
        let description: String

        static func wrongPolicy(_ policy: String, node: String?) -> Refusal {
            Refusal(description: "redis \(node.map { "\($0) " } ?? "")maxmemory-policy is \"\(policy)\", but the gateway needs \"noeviction\": any other policy lets Redis evict partners, keys, sessions and revocations when memory is full (set maxmemory-policy noeviction, as config/redis.conf does)")
        }
    }

    func run() async throws {
        let policies: [(node: String, policy: String?)]
        do {
            if let fromInfo = try await policiesFromInfo() {
                policies = fromInfo
            } else {
                policies = try await policiesFromConfig()
            }
        } catch let error as RedisError where error.isTLS {
            throw Refusal(description: "cannot use redis: TLS refused: \(error.detail) (check redis.tls.ca_file and redis.tls.server_name)")
        } catch let error as RedisError where error.isAuthentication {
            throw Refusal(description: "cannot use redis: it refused the gateway's credentials: \(error.detail) (check the user in redis.url and redis.password_env)")
        } catch {
            logger.warning("cannot check redis maxmemory-policy (redis unreachable at start-up: \(error)); starting anyway")
            return
        }
        for (node, policy) in policies {
            guard let policy else {
                logger.warning("cannot check redis maxmemory-policy of \(node) (neither INFO memory nor CONFIG GET is permitted); make sure it is noeviction")
                continue
            }
            guard policy.lowercased() == "noeviction" else { throw Refusal.wrongPolicy(policy, node: policies.count > 1 ? node : nil) }
        }
    }

    /// Each primary's policy by `CONFIG GET` (nil where Redis refuses it too).
    private func policiesFromConfig() async throws -> [(node: String, policy: String?)] {
        try await redis.sendToEveryPrimary(.configGet("maxmemory-policy")).map { node, reply in
            guard let pair = try? reply.throwingServerError().array, pair.count == 2 else { return (node, nil) }
            return (node, pair[1].string)
        }
    }

    /// The `maxmemory_policy:` line of each primary's `INFO memory` (the only one a
    /// standalone Redis or Sentinel has, every one on a cluster), or nil when Redis refuses
    /// the command (not permitted, renamed away).
    private func policiesFromInfo() async throws -> [(node: String, policy: String?)]? {
        let replies = try await redis.sendToEveryPrimary(.info("memory"))
        var policies: [(node: String, policy: String?)] = []
        for (node, reply) in replies {
            guard case .bulkString = reply else {
                if case .error(let message) = reply, RedisError.server(message).isAuthentication { throw RedisError.server(message) }
                return nil
            }
            let line = (reply.string ?? "").split(whereSeparator: \.isNewline).first { $0.hasPrefix("maxmemory_policy:") }
            policies.append((node, line.map { String($0.dropFirst("maxmemory_policy:".count)).trimmingCharacters(in: .whitespaces) }))
        }
        return policies
    }
}
