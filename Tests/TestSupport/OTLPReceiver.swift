import Foundation

/// A small OTLP/HTTP collector for the tracing tests: a Python process (the OpenTelemetry
/// project's own `opentelemetry-proto` decodes each `ExportTraceServiceRequest`) that writes
/// every span it receives as one JSON line, ids in hex as W3C `traceparent` shows them.
public final class OTLPReceiver: Sendable {
    public let port: Int
    private let spansPath: String
    private let process: ChildProcess
    private let folder: TemporaryFolder

    public init() async throws {
        let port = LoopbackPort.free()
        self.port = port
        folder = try TemporaryFolder("pg-otlp-\(port)")
        spansPath = folder.path("spans.jsonl")
        _ = FileManager.default.createFile(atPath: spansPath, contents: nil)
        let logPath = folder.path("receiver.log")
        process = try ChildProcess("/usr/bin/env", ["python3", "-c", Self.script, String(port), spansPath], outputPath: logPath)
        let process = self.process
        try await eventually(timeout: .seconds(10)) {
            guard process.isRunning else {
                throw ReceiverFailed(log: (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")
            }
            return LoopbackPort.isAccepting(port)
        }
    }

    deinit {
        process.kill9()
    }

    /// What `tracing.otlp_endpoint` is set to.
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    /// One exported span, as the receiver wrote it.
    public struct Span {
        public let fields: [String: Any]
        public var traceID: String { fields["trace_id"] as? String ?? "" }
        public var spanID: String { fields["span_id"] as? String ?? "" }
        public var parentSpanID: String { fields["parent_span_id"] as? String ?? "" }
        public var name: String { fields["name"] as? String ?? "" }
        /// `SPAN_KIND_SERVER`, `SPAN_KIND_CLIENT`, ...
        public var kind: String { fields["kind"] as? String ?? "" }
        /// `STATUS_CODE_UNSET`, `STATUS_CODE_OK`, `STATUS_CODE_ERROR`.
        public var status: String { fields["status"] as? String ?? "" }
        public var serviceName: String { (fields["resource"] as? [String: Any])?["service.name"] as? String ?? "" }
        public func attribute(_ name: String) -> Any? { (fields["attributes"] as? [String: Any])?[name] }
    }

    /// Every span received so far.
    public var spans: [Span] {
        let text = (try? String(contentsOfFile: spansPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]).map(Span.init)
        }
    }

    public struct ReceiverFailed: Error, CustomStringConvertible {
        public let log: String
        public var description: String { "the OTLP receiver exited (is opentelemetry-proto installed? scripts/install-deps.sh):\n\(log)" }
    }

    private static let script = #"""
    import json, sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest, ExportTraceServiceResponse
    from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

    port, out = int(sys.argv[1]), sys.argv[2]

    def value(any_value):
        kind = any_value.WhichOneof("value")
        return getattr(any_value, kind) if kind else None

    def attributes(pairs):
        return {pair.key: value(pair.value) for pair in pairs}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            request = ExportTraceServiceRequest.FromString(body)
            lines = []
            for resource_spans in request.resource_spans:
                resource = attributes(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        lines.append(json.dumps({
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent_span_id": span.parent_span_id.hex(),
                            "name": span.name,
                            "kind": Span.SpanKind.Name(span.kind),
                            "status": Status.StatusCode.Name(span.status.code),
                            "attributes": attributes(span.attributes),
                            "resource": resource,
                        }) + "\n")
            with open(out, "a") as spans:
                spans.write("".join(lines))
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *arguments):
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
    """#
}
