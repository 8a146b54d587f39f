import GatewayEdge
import GatewayObservability
import HTTPTypes
import Hummingbird
import Logging
import Tracing

/// The server span of every request Hummingbird answers (the proxy engine makes its own
/// through ``ExchangeTrace``, by the same rules of ``RequestTracing``), installed only when
/// tracing is on.
///
/// Not Hummingbird's `TracingMiddleware`: that one records the path and query (which can
/// carry phone numbers and tokens) and cannot give the trace id to the request's logger and
/// access line, which this one does (`trace_id`). The handlers run with the span's context as
/// the task-local context, so their Redis calls become its children.
struct ServerSpanMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let tracing: RequestTracing
    let clientAddress: ClientAddress

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let caller = TraceHeaders(request.headers)
        guard case .recorded = tracing.sampling(caller) else {
            // Not recorded: no span, but the caller's trace id (if any) still on the log lines.
            var context = context
            if let traceparent = caller.traceparent {
                context.traceID = TraceHeaders.traceID(of: traceparent)
                context.logger[metadataKey: "trace_id"] = context.traceID.map { .string($0) }
            }
            return try await next(request, context)
        }
        let method = request.method.rawValue
        // The route is known once the router has run; until then the span is named by method.
        let span = tracing.serverSpan(
            method: method, route: nil,
            client: clientAddress.resolve(peer: context.peerAddress, headers: request.headers),
            requestID: context.requestID, caller: caller
        )
        var context = context
        context.traceID = RequestTracing.traceID(of: span)
        context.logger[metadataKey: "trace_id"] = context.traceID.map { .string($0) }
        do {
            let response = try await ServiceContext.$current.withValue(span.context) { [context] in
                try await next(request, context)
            }
            RequestTracing.name(span, method: method, route: RouteLabel.of(endpointPath: context.endpointPath))
            RequestTracing.end(span, status: response.status.code)
            return response
        } catch {
            RequestTracing.name(span, method: method, route: RouteLabel.of(endpointPath: context.endpointPath))
            span.recordError(error)
            RequestTracing.end(span, status: (error as? any HTTPResponseError)?.status.code ?? 500)
            throw error
        }
    }
}
