import Metrics
import RedisClient
import Synchronization

/// The Redis pool's figures, through the pool's ``RedisPoolObserver``: latency per command and
/// per script, failures by kind, calls in flight, connection attempts, cluster redirections.
///
/// Labels are bounded: command and script names come from the gateway's code, never from
/// requests.
package enum RedisMetrics {
    package static func observer(poolSize: Int) -> RedisPoolObserver {
        Gauge(label: "gateway_redis_pool_size").record(poolSize)
        let inFlight = Meter(label: "gateway_redis_calls_in_flight")
        // Every call records these two: read without a shared lock.
        let commands = MetricHandleTable<String, Metrics.Timer> { Metrics.Timer(label: "gateway_redis_command_duration_seconds", dimensions: [("command", $0)]) }
        let scripts = MetricHandleTable<String, Metrics.Timer> { Metrics.Timer(label: "gateway_redis_script_duration_seconds", dimensions: [("script", $0)]) }
        let errors = HandleCache<Counter> { Counter(label: "gateway_redis_errors_total", dimensions: [("kind", $0)]) }
        let connects = HandleCache<Counter> { Counter(label: "gateway_redis_connects_total", dimensions: [("result", $0)]) }
        let redirections = HandleCache<Counter> { Counter(label: "gateway_redis_redirections_total", dimensions: [("kind", $0)]) }
        // Every series made now, at zero, so alert rules see them before the first failure.
        for kind in ["pool_closed", "connection", "timeout", "server", "protocol"] { _ = errors[kind] }
        for result in ["ok", "failed"] { _ = connects[result] }
        return RedisPoolObserver(
            started: { inFlight.increment() },
            finished: { name, duration, error in
                inFlight.decrement()
                commands.handle(for: name).record(duration: duration)
                if let error { errors[kind(of: error)].increment() }
            },
            scriptFinished: { script, duration, _ in
                scripts.handle(for: script).record(duration: duration)
            },
            dialed: { succeeded in
                connects[succeeded ? "ok" : "failed"].increment()
            },
            redirected: { kind in
                redirections[kind.rawValue].increment()
            }
        )
    }

    private static func kind(of error: RedisError) -> String {
        if error == .poolClosed { return "pool_closed" }
        if error.isConnection { return "connection" }
        if error.isTimeout { return "timeout" }
        if error.isServer { return "server" }
        return "protocol"
    }
}

/// Metric handles by one label value, made on first use.
package final class HandleCache<Handle: Sendable>: Sendable {
    private let make: @Sendable (String) -> Handle
    private let handles = Mutex([String: Handle]())

    package init(_ make: @escaping @Sendable (String) -> Handle) {
        self.make = make
    }

    package subscript(_ value: String) -> Handle {
        if let handle = handles.withLock({ $0[value] }) { return handle }
        let handle = make(value)
        handles.withLock { $0[value] = handle }
        return handle
    }
}
