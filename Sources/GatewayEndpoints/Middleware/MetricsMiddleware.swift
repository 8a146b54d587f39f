import GatewayObservability
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
            route: RouteLabel.of(endpointPath: context.endpointPath),
            method: request.method.rawValue,
            status: response.status.code
        )
        let handles = handles.handles(for: labels)
        handles.counter.increment()
        handles.timer.record(duration: ContinuousClock.now - started)
        return response
    }
}
