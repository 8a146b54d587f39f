import GatewayEdge
import GatewayObservability
import GatewayPrimitives
import Logging
import NIOHTTP1
import Tracing

/// The trace of one proxied exchange. Recorded (``RequestTracing/sampling(_:)``): the server
/// span from the request's head to the end of its response, and the client span of the upstream
/// call. Not recorded: no span at all, only the trace context passed on to the upstream (the
/// caller's unsampled `traceparent`, or a new unsampled one) and its trace id in the logs.
/// Only made when tracing is on (the exchange holds an optional), and driven on the
/// exchange's event loop like the exchange.
///
/// The context travels as a value: the upstream call's span is made from the server span's
/// context, and admission runs under ``asCurrent(_:)`` so the Redis calls it makes through
/// the async API find their parent in the task-local context.
package final class ExchangeTrace {
    private let tracing: RequestTracing
    private let server: (any Span)?
    private var upstream: (any Span)?
    /// The request's method, the upstream span's name.
    private let method: String
    /// Not recorded: the `traceparent` the upstream is sent, when the gateway made it (the
    /// caller sent none, or a malformed one); nil when the caller's passes as it came.
    private let newTraceparent: String?
    /// The trace id every line about the request carries (`trace_id`), recorded or not.
    package let traceID: String?

    package init(_ request: ProxyEngine.Request, tracing: RequestTracing) {
        self.tracing = tracing
        method = request.method
        let caller = TraceHeaders(traceparent: request.head.first("traceparent"), tracestate: request.head.first("tracestate"))
        switch tracing.sampling(caller) {
        case .recorded:
            let server = tracing.serverSpan(
                method: request.method, route: request.route.endpointLabel, client: request.clientIP,
                requestID: request.requestID, caller: caller
            )
            self.server = server
            newTraceparent = nil
            traceID = RequestTracing.traceID(of: server)
        case .propagated(let traceparent, let generated):
            server = nil
            newTraceparent = generated ? traceparent : nil
            traceID = TraceHeaders.traceID(of: traceparent)
        }
    }

    /// Runs `body` (the start of admission) with the server span as the task-local context,
    /// which a task it starts inherits.
    package func asCurrent<Result>(_ body: () throws -> Result) rethrows -> Result {
        guard let server else { return try body() }
        return try ServiceContext.$current.withValue(server.context, operation: body)
    }

    /// `trace_id` added to a log line's metadata.
    package func annotate(_ metadata: inout Logger.Metadata) {
        if let traceID { metadata["trace_id"] = .string(traceID) }
    }

    /// The API key admitted (its id, never the key), on the server span.
    package func admitted(keyID: String) {
        guard let server else { return }
        server.attributes["gateway.key_id"] = keyID
    }

    // MARK: The upstream call

    /// A try with `target` (nil: the route's first) begins, or its request is being sent: its
    /// client span starts at the first of these calls (one per try: a failed try's span ended
    /// with ``upstreamFailed(_:)``). Returns the trace context the upstream is sent in place of
    /// the caller's (that span's `traceparent`, or a new unsampled one), or nil when the
    /// caller's passes as it came.
    package func upstreamStarting(route: ProxyRoute, target: UpstreamTarget? = nil) -> [(name: String, value: String)]? {
        guard let server else {
            return newTraceparent.map { [(name: HeaderName.traceparent.name, value: $0)] }
        }
        let span = upstream ?? tracing.upstreamSpan(
            method: method, route: route.name, host: (target?.pool ?? route.pool).host, port: (target?.pool ?? route.pool).port,
            parent: server.context
        )
        upstream = span
        return tracing.traceFields(of: span.context)
    }

    package func upstreamResponded(status: Int) {
        guard let upstream else { return }
        upstream.attributes["http.response.status_code"] = status
        if status >= 500 { upstream.setStatus(SpanStatus(code: .error)) }
    }

    /// The upstream's response has ended.
    package func upstreamEnded() {
        upstream?.end()
        upstream = nil
    }

    /// The upstream call failed (`kind`: refused, reset, timeout, ...).
    package func upstreamFailed(_ kind: String) {
        guard let upstream else { return }
        upstream.attributes["error.type"] = kind
        upstream.setStatus(SpanStatus(code: .error, message: kind))
        upstream.end()
        self.upstream = nil
    }

    // MARK: The end

    /// The response has ended with `status`, or the client went away (nil).
    package func finished(status: Int?) {
        if let upstream {
            upstream.attributes["error.type"] = "client_closed"
            upstream.end()
            self.upstream = nil
        }
        guard let server else { return }
        guard let status else {
            server.attributes["error.type"] = "client_closed"
            server.end()
            return
        }
        RequestTracing.end(server, status: status)
    }
}
