import Hummingbird
import Metrics

/// Counts requests and records their latency by listener, route, method and status.
///
/// The route label is the matched route (`/healthz`, a proxy route's name) or `unmatched`, never
/// the raw path, so a scan of random URLs cannot blow up the number of series.
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let listener: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let response = try await next(request, context)
        let dimensions = [
            ("listener", listener),
            ("route", context.endpointPath ?? "unmatched"),
            ("method", request.method.rawValue),
            ("status", String(response.status.code)),
        ]
        Counter(label: "gateway_http_requests_total", dimensions: dimensions).increment()
        Metrics.Timer(label: "gateway_http_request_duration_seconds", dimensions: dimensions)
            .record(duration: ContinuousClock.now - started)
        return response
    }
}
