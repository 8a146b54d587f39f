import GatewayEndpoints
import Logging
import ServiceLifecycle
import Synchronization

/// Says once that the process serves: every listener listens and Redis answers (what `/readyz`
/// says). It logs `ready` and tells a supervisor that waits for it (systemd's `READY=1`,
/// ``SystemdNotify``), so that a gateway started beside a running one on the same ports
/// (`server.reuse_port`) is known to be ready before the running one is told to stop; a
/// graceful shutdown is announced as `STOPPING=1`.
final class ReadinessNotice: Service, Sendable {
    private struct State {
        var listening = 0
        var redis: RedisReadiness?
        var shuttingDown = false
    }

    private let listeners: Int
    private let state = Mutex(State())
    private let logger: Logger

    /// `listeners`: how many report ``listening()`` before the process can serve.
    init(listeners: Int = 2, logger: Logger) {
        self.listeners = listeners
        self.logger = logger
    }

    /// A listener's socket listens.
    func listening() {
        state.withLock { $0.listening += 1 }
    }

    /// Follows `readiness` (the one `/readyz` reads).
    func watch(_ readiness: RedisReadiness) {
        state.withLock { $0.redis = readiness }
    }

    func run() async throws {
        let ready = await withGracefulShutdownHandler {
            await untilReady()
        } onGracefulShutdown: {
            self.state.withLock { $0.shuttingDown = true }
        }
        if ready {
            logger.info("ready")
            SystemdNotify.send("READY=1")
        }
        try? await gracefulShutdown()
        SystemdNotify.send("STOPPING=1")
    }

    /// Whether the process became ready (false: it is shutting down, or was cancelled, first).
    /// Polled: neither the listeners nor Redis say when they are, and it happens once.
    private func untilReady() async -> Bool {
        while true {
            let (ready, shuttingDown) = state.withLock { state in
                (state.listening >= listeners && state.redis?.isReady == true, state.shuttingDown)
            }
            if ready { return true }
            if shuttingDown { return false }
            do {
                try await Task.sleep(for: .milliseconds(20))
            } catch {
                return false
            }
        }
    }
}
