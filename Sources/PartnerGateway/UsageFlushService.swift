import KeyRegistry
import ServiceLifecycle

/// Runs ``UsageCounter``'s once-a-second flush; on shutdown, after the listeners drained, it
/// flushes once more, before the Redis pool closes.
struct UsageFlushService: Service {
    let counter: UsageCounter

    func run() async throws {
        let counter = counter
        try await cancelWhenGracefulShutdown { await counter.run() }
    }
}
