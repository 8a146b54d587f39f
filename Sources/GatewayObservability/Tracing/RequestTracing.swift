import GatewayConfiguration
import HTTPTypes
import Logging
import OTel
import ServiceLifecycle
import Synchronization
import Tracing

/// Distributed tracing when `tracing.otlp_endpoint` is set (docs/operations.md, "Tracing"):
/// the tracer every span of the gateway is made with, and the rules those spans follow, in
/// one place for the proxy engine (``ExchangeTrace``), the gateway's own endpoints
/// (``ServerSpanMiddleware``) and the Redis pool.
///
/// Nil wherever tracing is off: the one check a request pays then is that nil.
///
/// Spans are exported by swift-otel's batching span processor and OTLP/HTTP exporter, which
/// run as the ``service`` in the application's service group and send what is left when it
/// shuts down. The context is passed explicitly (a `ServiceContext` value on the exchange),
/// not through task-locals: proxied requests run on event loops with futures, where
/// task-locals do not flow (docs/DECISIONS.md, "Tracing").
package struct RequestTracing: Sendable {
    package let tracer: any Tracer
    /// `tracing.sampling_ratio`: the share of new traces that are recorded.
    package let samplingRatio: Double
    /// Exports the spans: belongs in the service group before everything that makes spans,
    /// so it stops (and flushes) after them.
    package let service: any Service

    /// The tracer for `config`, or nil when tracing is off.
    package static func make(_ config: GatewayConfig.Tracing, logger: Logger) throws -> RequestTracing? {
        guard config.isEnabled else { return nil }
        var otel = OTel.Configuration.default
        otel.serviceName = config.serviceName
        // swift-otel's own problems (an unreachable collector) go to the gateway's log.
        otel.diagnosticLogger = .custom(logger)
        otel.diagnosticLogLevel = .warning
        otel.propagators = [.traceContext]
        otel.logs.enabled = false
        otel.metrics.enabled = false
        // Which requests are recorded is decided before any span is made (``sampling(_:)``):
        // the tracer records every span it is asked for.
        otel.traces.sampler = .parentBasedAlwaysOn
        otel.traces.exporter = .otlp
        otel.traces.otlpExporter.protocol = .httpProtobuf
        otel.traces.otlpExporter.endpoint = config.tracesURL
        let backend = try OTel.makeTracingBackend(configuration: otel)
        tracersInUse.withLock { $0.append(backend.factory) }
        return RequestTracing(tracer: backend.factory, samplingRatio: config.samplingRatio, service: backend.service)
    }

    /// Every tracer made (and through it its processor and exporter), kept until the process
    /// exits. The batch processor shuts the exporter's HTTP client down when the service
    /// group stops; but the exporter's `deinit` also calls AsyncHTTPClient's `syncShutdown()`
    /// as a backstop, which traps on an event loop thread, and in the gateway every Swift task
    /// runs on NIO's event loops (`App`). Never released, that `deinit` never runs.
    private static let tracersInUse = Mutex<[any Tracer]>([])

    // MARK: Sampling

    /// What a request gets: spans (recorded and exported), or only its trace context passed on.
    package enum Sampling {
        case recorded
        /// Not recorded: no span is made. `traceparent` is the caller's when it sent a valid
        /// one (its trace goes on, unsampled), else a new unsampled one (`generated`).
        case propagated(traceparent: String, generated: Bool)
    }

    /// Head sampling, decided once per request before any span exists, so the requests that
    /// are not recorded (99 of 100 at `sampling_ratio: 0.01`) make no span, context or id
    /// through the tracer: a caller's sampled `traceparent` is recorded, a caller's unsampled
    /// one is not, and a new trace is recorded at `samplingRatio`. This is OpenTelemetry's
    /// parent-based ratio sampler, applied ahead of the tracer.
    package func sampling(_ caller: TraceHeaders) -> Sampling {
        if let traceparent = caller.traceparent {
            return TraceHeaders.isSampled(traceparent) ? .recorded : .propagated(traceparent: traceparent, generated: false)
        }
        if samplingRatio >= 1 { return .recorded }
        // One generator for the draw and the new ids: one lookup of the thread's state.
        var random = TraceRandom()
        if samplingRatio > 0 && Double.random(in: 0..<1, using: &random) < samplingRatio { return .recorded }
        return .propagated(traceparent: TraceHeaders.unsampledTraceparent(using: &random), generated: true)
    }

    // MARK: Server spans

    /// A server span for a request, continuing the caller's `traceparent`/`tracestate` when
    /// they are valid (a new trace otherwise). Named and labelled as OpenTelemetry's HTTP
    /// conventions say: `{method} {http.route}`, `http.request.method`, `http.route` (the
    /// route label, ``RouteLabel``), `client.address`.
    ///
    /// Never `url.path` nor the query: a path can carry a phone number or a token, and spans
    /// leave the gateway for a collector, so they follow the access log's rule (the route, not
    /// the path).
    ///
    /// `route` nil: not known yet (``name(_:method:route:)`` names the span once it is).
    package func serverSpan(method: String, route: String?, client: String?, requestID: String, caller: TraceHeaders) -> any Span {
        var parent = ServiceContext.topLevel
        if caller.traceparent != nil { tracer.extract(caller, into: &parent, using: TraceHeaders.Reader()) }
        let span = tracer.startSpan(route.map { "\(method) \($0)" } ?? method, context: parent, ofKind: .server)
        span.updateAttributes { attributes in
            attributes["http.request.method"] = method
            attributes["http.route"] = route
            attributes["client.address"] = client
            attributes["gateway.request_id"] = requestID
        }
        return span
    }

    /// Names a server span after its route once the route is known.
    package static func name(_ span: any Span, method: String, route: String) {
        span.operationName = "\(method) \(route)"
        span.attributes["http.route"] = route
    }

    /// Ends a server span with the status answered; 5xx marks it failed.
    package static func end(_ span: any Span, status: Int) {
        span.attributes["http.response.status_code"] = status
        if status >= 500 { span.setStatus(SpanStatus(code: .error)) }
        span.end()
    }

    /// The trace id of a span as logs carry it (`trace_id`): 32 hex digits.
    package static func traceID(of span: any Span) -> String? {
        span.context.otelTraceID
    }

    // MARK: Client spans

    /// A client span for the call to an upstream, child of `parent`; its context is what the
    /// upstream is sent as `traceparent` (see ``inject(_:into:)``).
    package func upstreamSpan(method: String, route: String, host: String, port: Int, parent: ServiceContext) -> any Span {
        let span = tracer.startSpan(method, context: parent, ofKind: .client)
        span.updateAttributes { attributes in
            attributes["http.request.method"] = method
            attributes["http.route"] = route
            attributes["server.address"] = host
            attributes["server.port"] = port
        }
        return span
    }

    /// The `traceparent` (and `tracestate`) of `context` (the upstream span's), which replace
    /// the caller's on the upstream's request (``ForwardedHeaders``), so the upstream joins the
    /// same trace as a child of the gateway's call.
    package func traceFields(of context: ServiceContext) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        tracer.inject(context, into: &fields, using: FieldListInjector())
        return fields
    }

    /// Collects `traceparent`/`tracestate` as name and value pairs.
    private struct FieldListInjector: Injector {
        package func inject(_ value: String, forKey key: String, into carrier: inout [(name: String, value: String)]) {
            carrier.removeAll { $0.name == key }
            carrier.append((name: key, value: value))
        }
    }
}
