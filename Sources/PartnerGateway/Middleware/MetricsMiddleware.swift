import Hummingbird
import Metrics

/// Counts requests and records their latency by listener, route, method and status.
///
/// The route label is ``RouteLabel``'s, so a scan of random URLs cannot blow up the number
/// of series. The metric handles for each label set are made once and reused: asking the
/// metrics factory for them on every request would cost more than a cached key check.
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let listener: String
    private let handles: RequestMetricHandles
    private let inFlight: Meter

    init(listener: String) {
        self.listener = listener
        handles = RequestMetricHandles(listener: listener)
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
        let handles = handles.handles(for: labels)
        handles.counter.increment()
        handles.timer.record(duration: ContinuousClock.now - started)
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

    private let table: MetricHandleTable<Labels, Handles>

    init(listener: String) {
        table = MetricHandleTable { labels in
            let dimensions = [
                ("listener", listener),
                ("route", labels.route),
                ("method", labels.method),
                ("status", String(labels.status)),
            ]
            return Handles(
                counter: Counter(label: "gateway_http_requests_total", dimensions: dimensions),
                timer: Metrics.Timer(label: "gateway_http_request_duration_seconds", dimensions: dimensions)
            )
        }
    }

    /// A label set's counter and timer.
    struct Handles: Sendable {
        let counter: Counter
        let timer: Metrics.Timer
    }

    /// `gateway_http_requests_in_flight` of `listener`.
    static func inFlight(listener: String) -> Meter {
        Meter(label: "gateway_http_requests_in_flight", dimensions: [("listener", listener)])
    }

    func handles(for labels: Labels) -> Handles {
        table.handle(for: labels)
    }
}
