import Hummingbird
import Metrics
import NIOPosix
import Synchronization

/// Counts requests and records their latency by listener, route, method and status.
///
/// The route label is ``RouteLabel``'s, so a scan of random URLs cannot blow up the number
/// of series. The metric
/// handles for each label set are made once and reused: asking the metrics factory for them on
/// every request cost more than the rest of a cached key check.
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let listener: String
    private let handles = RequestMetricHandles()
    private let inFlight: Meter

    init(listener: String) {
        self.listener = listener
        inFlight = RequestMetricHandles.inFlight(listener: listener)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        inFlight.increment()
        defer { inFlight.decrement() }
        let response = try await next(request, context)
        let labels = RequestMetricHandles.Labels(
            route: RouteLabel.of(context),
            method: request.method.rawValue,
            status: response.status.code
        )
        let (counter, timer) = handles.handles(for: labels, listener: listener)
        counter.increment()
        timer.record(duration: ContinuousClock.now - started)
        return response
    }
}

/// The counter and timer of each label set, made on first use.
final class RequestMetricHandles: Sendable {
    struct Labels: Hashable, Sendable {
        let route: String
        let method: String
        let status: Int
    }

    private let cache = Mutex([Labels: (Counter, Metrics.Timer)]())
    /// Each thread's own copy of the handles it has used, and the last ones: the shared table's
    /// lock and a hash of the labels on every request, from every event loop, showed in
    /// profiles of the proxy (a keep-alive connection asks for the same labels every time).
    private let threadCopies = ThreadSpecificVariable<ThreadCopy>()

    /// Only the thread it belongs to reads or writes it (``threadCopies``).
    private final class ThreadCopy: @unchecked Sendable {
        var lastLabels: Labels?
        var lastHandles: (Counter, Metrics.Timer)?
        var handles: [Labels: (Counter, Metrics.Timer)] = [:]
    }

    /// `gateway_http_requests_in_flight` of `listener`.
    static func inFlight(listener: String) -> Meter {
        Meter(label: "gateway_http_requests_in_flight", dimensions: [("listener", listener)])
    }

    func handles(for labels: Labels, listener: String) -> (Counter, Metrics.Timer) {
        let copy: ThreadCopy
        if let existing = threadCopies.currentValue {
            copy = existing
        } else {
            copy = ThreadCopy()
            threadCopies.currentValue = copy
        }
        if let lastHandles = copy.lastHandles, copy.lastLabels == labels { return lastHandles }
        let handles = copy.handles[labels] ?? sharedHandles(for: labels, listener: listener)
        copy.handles[labels] = handles
        copy.lastLabels = labels
        copy.lastHandles = handles
        return handles
    }

    private func sharedHandles(for labels: Labels, listener: String) -> (Counter, Metrics.Timer) {
        if let cached = cache.withLock({ $0[labels] }) { return cached }
        let dimensions = [
            ("listener", listener),
            ("route", labels.route),
            ("method", labels.method),
            ("status", String(labels.status)),
        ]
        let made = (
            Counter(label: "gateway_http_requests_total", dimensions: dimensions),
            Metrics.Timer(label: "gateway_http_request_duration_seconds", dimensions: dimensions)
        )
        cache.withLock { $0[labels] = made }
        return made
    }
}
