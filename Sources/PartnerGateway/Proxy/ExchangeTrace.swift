import Logging
import NIOHTTP1
import Tracing

/// The spans of one proxied exchange: the server span from the request's head to the end of
/// its answer, and the client span of the upstream call. Only made when tracing is on (the
/// exchange holds an optional), and driven on the exchange's event loop like the exchange.
///
/// The context travels as a value: the upstream call's span is made from ``context``, and
/// admission runs under ``asCurrent(_:)`` so the Redis calls it makes through the async API
/// find their parent in the task-local context.
final class ExchangeTrace {
    private let tracing: RequestTracing
    private let server: any Span
    private var upstream: (any Span)?
    /// The trace id every line about the request carries (`trace_id`), sampled or not.
    let traceID: String?

    init(_ request: ProxyEngine.Request, tracing: RequestTracing) {
        self.tracing = tracing
        server = tracing.serverSpan(
            method: request.method, path: request.path, route: request.route.endpointLabel, client: request.clientIP,
            requestID: request.requestID, caller: TraceHeaders(request.head.headers)
        )
        traceID = RequestTracing.traceID(of: server)
    }

    /// The server span's context: the parent of the upstream call and of admission's Redis calls.
    var context: ServiceContext { server.context }

    /// Runs `body` (the start of admission) with this trace as the task-local context, which
    /// a task it starts inherits.
    func asCurrent<Result>(_ body: () throws -> Result) rethrows -> Result {
        try ServiceContext.$current.withValue(server.context, operation: body)
    }

    /// `trace_id` added to a log line's metadata.
    func annotate(_ metadata: inout Logger.Metadata) {
        if let traceID { metadata["trace_id"] = .string(traceID) }
    }

    // MARK: The upstream call

    /// The request is being sent upstream: its client span starts (once; a retry on a new
    /// connection is the same call) and the upstream is sent that span's `traceparent`.
    func upstreamStarting(_ head: inout HTTPRequestHead, route: ProxyRoute) {
        let span = upstream ?? tracing.upstreamSpan(
            method: head.method.rawValue, route: route.name, host: route.pool.host, port: route.pool.port, parent: server.context
        )
        upstream = span
        tracing.inject(span.context, into: &head.headers)
    }

    func upstreamResponded(status: Int) {
        guard let upstream else { return }
        upstream.attributes["http.response.status_code"] = status
        if status >= 500 { upstream.setStatus(SpanStatus(code: .error)) }
    }

    /// The upstream's response has ended.
    func upstreamEnded() {
        upstream?.end()
        upstream = nil
    }

    /// The upstream call failed (`kind`: refused, reset, timeout, ...).
    func upstreamFailed(_ kind: String) {
        guard let upstream else { return }
        upstream.attributes["error.type"] = kind
        upstream.setStatus(SpanStatus(code: .error, message: kind))
        upstream.end()
        self.upstream = nil
    }

    // MARK: The end

    /// The answer has ended with `status`, or the client went away (nil).
    func finished(status: Int?) {
        if let upstream {
            upstream.attributes["error.type"] = "client_closed"
            upstream.end()
            self.upstream = nil
        }
        guard let status else {
            server.attributes["error.type"] = "client_closed"
            server.end()
            return
        }
        RequestTracing.end(server, status: status)
    }
}
