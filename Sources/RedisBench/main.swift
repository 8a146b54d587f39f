import ArgumentParser
import Foundation
import GatewayPrimitives
import NIOPosix
import RateLimit
import RedisClient
import Synchronization

/// Measures the gateway's Redis client the way `redis-benchmark` measures Redis: N concurrent
/// callers issuing one command each at a time, as fast as replies come back.
///
/// `benchmarks/redis-client.sh` runs it beside `redis-benchmark` against the same server.
@main
struct RedisBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "redis-bench",
        abstract: "Round trips per second of the gateway's Redis client."
    )

    enum Workload: String, ExpressibleByArgument, CaseIterable {
        /// `PING`.
        case ping
        /// One token-bucket decision (`EVALSHA` of the limiter's script) on a random bucket.
        case bucket
    }

    enum Client: String, ExpressibleByArgument, CaseIterable {
        /// The gateway's client: pipelined NIO connections (`RedisConnectionPool`).
        case pool
        /// The alternative we measured and rejected: one blocking hiredis connection per
        /// caller, each call run on a thread pool.
        case blocking
    }

    @Option(help: "The Redis to measure.") var url = "redis://127.0.0.1:6379/0"
    @Option(help: "What each call does: \(Workload.allCases.map(\.rawValue).joined(separator: ", ")).") var workload = Workload.ping
    @Option(help: "Which client: \(Client.allCases.map(\.rawValue).joined(separator: ", ")).") var client = Client.pool
    @Option(help: "Concurrent callers.") var callers = 50
    @Option(help: "Connections in the pool (pool client only).") var poolSize = 16
    @Option(help: "Total calls.") var requests = 200_000
    @Option(help: "Distinct buckets the bucket workload picks from.") var keyspace = 10_000
    @Option(help: "Redis Cluster seed nodes, host:port separated by commas (pool client only); the URL then gives only scheme and credentials.")
    var clusterNodes: String?
    @Option(help: "rediss:// URLs: the CA file to trust (pool client only).") var tlsCAFile: String?
    @Option(help: "rediss:// URLs: the name the server's certificate must carry.") var tlsServerName: String?

    @Flag(help: "Print the token-bucket script's source and exit (for redis-benchmark).") var printScript = false
    @Flag(help: "Print the token-bucket script's SHA-1 and exit.") var printScriptSha = false

    func run() async throws {
        if printScript {
            print(RedisRateLimiter.scriptSource)
            return
        }
        if printScriptSha {
            print(RedisRateLimiter.scriptSHA1)
            return
        }
        let redisURL = try RedisURL(url)
        let operation: @Sendable () async throws -> Void
        var cleanup: @Sendable () async throws -> Void = {}
        let limit = TokenBucket(capacity: 1_000_000, refillPerSecond: 1_000_000)
        let keyspace = self.keyspace
        switch client {
        case .pool:
            let tls = redisURL.usesTLS ? try RedisTLS(.init(caFile: tlsCAFile, serverName: tlsServerName)) : nil
            let cluster = try clusterNodes.map { list in
                let seeds = list.split(separator: ",").compactMap(RedisNodeAddress.init)
                guard !seeds.isEmpty else { throw ValidationError("--cluster-nodes: expected host:port[,host:port...]") }
                return RedisCluster(seeds: seeds)
            }
            let pool = RedisConnectionPool(configuration: RedisConfiguration(url: redisURL, tls: tls, cluster: cluster, poolSize: poolSize, timeout: .seconds(5)))
            let limiter = RedisRateLimiter(redis: pool)
            cleanup = { pool.shutdown() }
            switch workload {
            case .ping:
                operation = { try await pool.ping() }
            case .bucket:
                operation = {
                    _ = try await limiter.check([RateLimitBucket(key: "bench:\(Int.random(in: 0..<keyspace))", limit: limit)])
                }
            }
        case .blocking:
            let threads = NIOThreadPool(numberOfThreads: callers)
            threads.start()
            let connections = try (0..<callers).map { _ in try BlockingRedisConnection(url: redisURL, timeout: .seconds(5)) }
            let next = Counter()
            cleanup = { try await threads.shutdownGracefully() }
            let script = RedisScript(name: "token-bucket", source: try await Self.tokenBucketSource(url: redisURL))
            operation = {
                let connection = connections[next.increment() % connections.count]
                switch workload {
                case .ping:
                    _ = try await connection.send(.ping(), on: threads)
                case .bucket:
                    let key = RedisRateLimiter.redisKey(for: RateLimitBucket(key: "bench:\(Int.random(in: 0..<keyspace))", limit: limit))
                    _ = try await connection.send(.evalsha(script, keys: [key], arguments: ["1000000", "1000000.0"]), on: threads)
                }
            }
        }

        // Warm up: connect everything and load the script.
        for _ in 0..<callers { try await operation() }

        let issued = Counter()
        let total = requests
        let clock = ContinuousClock()
        let started = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<callers {
                group.addTask {
                    while issued.increment() < total {
                        try await operation()
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = clock.now - started
        let seconds = elapsed.inSeconds
        try await cleanup()
        print("\(client.rawValue) \(workload.rawValue) callers=\(callers) requests=\(total) seconds=\(String(format: "%.3f", seconds)) ops_per_sec=\(Int(Double(total) / seconds))")
    }

    /// The limiter's script, loaded the way the pool would, so both clients run the same Lua.
    private static func tokenBucketSource(url: RedisURL) async throws -> String {
        let pool = RedisConnectionPool(configuration: RedisConfiguration(url: url, poolSize: 1))
        defer { pool.shutdown() }
        let limiter = RedisRateLimiter(redis: pool)
        _ = try await limiter.check([RateLimitBucket(key: "bench:warmup", limit: TokenBucket(capacity: 1, refillPerSecond: 1))])
        return RedisRateLimiter.scriptSource
    }
}

/// A shared counter the callers draw from.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)

    /// The value before this call added one.
    func increment() -> Int {
        value.add(1, ordering: .relaxed).oldValue
    }
}
