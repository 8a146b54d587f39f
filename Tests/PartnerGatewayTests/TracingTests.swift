import Foundation
import Testing
import TestSupport

/// Distributed tracing, end to end: a gateway process exporting OTLP/HTTP to a real
/// receiver, an upstream that shows what it was sent, a client with its own `traceparent`.
@Suite("Tracing", .realProcesses)
struct TracingTests {
    private let clientTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
    private let clientSpanID = "00f067aa0ba902b7"

    private func yaml(redis: RedisServer, upstream: EchoUpstreamProcess, receiver: OTLPReceiver, ratio: Double) -> String {
        """
        redis: {url: \(redis.url), timeout: \(GatewayProcess.redisTimeout)}
        otp: {mode: uat}
        rate_limits: {otp_trigger_per_phone: {capacity: 100, refill_per_second: 10}}
        tracing: {otlp_endpoint: "\(receiver.endpoint)", sampling_ratio: \(ratio)}
        routes:
          - {name: user, path_prefix: /user, upstream: \(upstream.url), auth: bearer, rate_limit: {per: user, capacity: 100, refill_per_second: 50}}
        """
    }

    /// The `traceparent` the upstream received, split into its four fields.
    private func upstreamTraceparent(_ answer: DriverResponse) throws -> [Substring] {
        let value = try #require(DriverEcho.single(answer, "traceparent"), "the upstream got no single traceparent: \(answer)")
        let fields = value.split(separator: "-")
        try #require(fields.count == 4, "\(value)")
        return fields
    }

    @Test func aCallersTraceIsContinuedThroughTheGatewayToTheUpstream() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        let receiver = try await OTLPReceiver()
        let gateway = try await GatewayProcess(yaml: yaml(redis: redis, upstream: upstream, receiver: receiver, ratio: 1.0))
        let pair = try await DriverAPI.login(gateway, phone: "9876543210")

        let answer = try await DriverHTTP.call(gateway.baseURL + "/user/profile?phone=9876543210", headers: [
            ("Authorization", "Bearer \(pair.accessToken)"), ("X-Request-Id", "traced-1"),
            ("traceparent", "00-\(clientTraceID)-\(clientSpanID)-01"), ("tracestate", "vendor=abc"),
        ])
        #expect(answer.status == 200, "\(answer)")
        let sent = try upstreamTraceparent(answer)
        #expect(sent[1] == clientTraceID[...], "the upstream is in the client's trace")
        #expect(sent[2] != clientSpanID[...], "the upstream's parent is the gateway's call, not the client")
        #expect(sent[3] == "01")
        #expect(DriverEcho.single(answer, "tracestate") == "vendor=abc")

        // Stopping flushes what the batching processor still holds, and exits cleanly.
        await gateway.stop()
        #expect(gateway.process.exitCode == 0, "\(gateway.log)")
        try await eventually(timeout: .seconds(10)) { receiver.spans.contains { $0.kind == "SPAN_KIND_CLIENT" && $0.traceID == clientTraceID } }
        let spans = receiver.spans.filter { $0.traceID == clientTraceID }

        let server = try #require(spans.first { $0.kind == "SPAN_KIND_SERVER" }, "\(spans.map(\.fields))")
        #expect(server.parentSpanID == clientSpanID, "the server span is the client's child")
        #expect(server.name == "GET user")
        #expect(server.attribute("http.request.method") as? String == "GET")
        #expect(server.attribute("http.route") as? String == "user")
        // The route names the request, as on the access line; the path may hold personal data.
        #expect(server.attribute("url.path") == nil)
        #expect(server.attribute("http.response.status_code") as? Int == 200)
        #expect(server.attribute("gateway.request_id") as? String == "traced-1")
        #expect(server.serviceName == "partner-gateway")
        #expect(server.status != "STATUS_CODE_ERROR")
        // Never the query (it can carry phone numbers or tokens), never the token.
        #expect(!"\(server.fields)".contains("9876543210"))
        #expect(!"\(spans.map(\.fields))".contains(pair.accessToken))

        let call = try #require(spans.first { $0.kind == "SPAN_KIND_CLIENT" && $0.attribute("http.request.method") != nil })
        #expect(call.parentSpanID == server.spanID)
        #expect(call.spanID == String(sent[2]), "the upstream's traceparent carries the upstream span's id")
        #expect(call.attribute("server.address") as? String == "127.0.0.1")
        #expect(call.attribute("server.port") as? Int == upstream.port)
        #expect(call.attribute("http.response.status_code") as? Int == 200)

        // The route's rate limit is one Redis script while the request is admitted.
        let script = try #require(spans.first { $0.attribute("db.system") as? String == "redis" }, "\(spans.map(\.fields))")
        #expect(script.parentSpanID == server.spanID)
        #expect(script.kind == "SPAN_KIND_CLIENT")
        #expect((script.attribute("db.operation") as? String)?.isEmpty == false)

        // The gateway's own endpoints have server spans too (the login, new traces).
        let verify = try #require(receiver.spans.first { $0.attribute("http.route") as? String == "/auth/otp/verify" })
        #expect(verify.kind == "SPAN_KIND_SERVER")
        #expect(verify.name == "POST /auth/otp/verify")
        #expect(verify.attribute("http.response.status_code") as? Int == 200)
        #expect(receiver.spans.contains { $0.traceID == verify.traceID && $0.parentSpanID == verify.spanID && $0.attribute("db.system") != nil })

        // The access line carries the trace id.
        let access = try #require(gateway.log.split(separator: "\n").first { $0.contains("\"request_id\":\"traced-1\"") })
        #expect(access.contains("\"trace_id\":\"\(clientTraceID)\""), "\(access)")
    }

    /// At `sampling_ratio: 0` a new trace is not exported, nor one the caller did not sample,
    /// though its id still reaches the upstream; a caller's sampled flag is honoured.
    @Test func sampledFlagIsHonouredAndRatioZeroExportsNothingElse() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        let receiver = try await OTLPReceiver()
        let gateway = try await GatewayProcess(yaml: yaml(redis: redis, upstream: upstream, receiver: receiver, ratio: 0))
        let pair = try await DriverAPI.login(gateway, phone: "9876543211")
        let authorization = ("Authorization", "Bearer \(pair.accessToken)")

        let fresh = try await DriverHTTP.call(gateway.baseURL + "/user/a", headers: [authorization])
        let freshTrace = try upstreamTraceparent(fresh)
        #expect(freshTrace[3] == "00", "a new trace at ratio 0 is not sampled")
        let unsampledID = "11111111111111111111111111111111"
        let unsampled = try await DriverHTTP.call(gateway.baseURL + "/user/b", headers: [authorization, ("traceparent", "00-\(unsampledID)-\(clientSpanID)-00")])
        #expect(try upstreamTraceparent(unsampled)[1] == unsampledID[...])
        let sampled = try await DriverHTTP.call(gateway.baseURL + "/user/c", headers: [authorization, ("traceparent", "00-\(clientTraceID)-\(clientSpanID)-01")])
        #expect(try upstreamTraceparent(sampled)[3] == "01")
        // A malformed traceparent starts a new trace, quietly.
        let malformed = try await DriverHTTP.call(gateway.baseURL + "/user/d", headers: [authorization, ("traceparent", "00-not-a-trace-01")])
        #expect(malformed.status == 200)
        #expect(try upstreamTraceparent(malformed)[1] != "not")

        await gateway.stop()
        try await eventually(timeout: .seconds(10)) { receiver.spans.contains { $0.traceID == clientTraceID && $0.kind == "SPAN_KIND_CLIENT" } }
        let exported = Set(receiver.spans.map(\.traceID))
        #expect(exported == [clientTraceID], "only the caller-sampled trace is exported: \(exported)")
        // No warning about the malformed header (the only warning is the ephemeral assertion key's).
        let warnings = gateway.log.split(separator: "\n").filter { $0.contains("\"level\":\"warning\"") }
        #expect(warnings.allSatisfy { $0.contains("assertion.signing_keys is empty") }, "\(warnings)")
    }

    /// A path can carry a phone number (`/user/<phone>/trips`), so spans name the route, as the
    /// access line does, and never the path or query: neither a proxied request's spans nor
    /// those of a path no route takes.
    @Test func spansNameTheRouteAndNeverThePath() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        let receiver = try await OTLPReceiver()
        let gateway = try await GatewayProcess(yaml: yaml(redis: redis, upstream: upstream, receiver: receiver, ratio: 1.0))
        let pair = try await DriverAPI.login(gateway, phone: "9876543212")
        let phone = "9811122233"

        let proxied = try await DriverHTTP.call(gateway.baseURL + "/user/\(phone)/trips?phone=\(phone)", headers: [
            ("Authorization", "Bearer \(pair.accessToken)"), ("X-Request-Id", "path-proxied"),
        ])
        #expect(proxied.status == 200, "\(proxied)")
        let unmatched = try await DriverHTTP.call(gateway.baseURL + "/drivers/\(phone)", headers: [("X-Request-Id", "path-unmatched")])
        #expect(unmatched.status == 404, "\(unmatched)")

        await gateway.stop()
        func server(_ requestID: String) -> OTLPReceiver.Span? {
            receiver.spans.first { $0.kind == "SPAN_KIND_SERVER" && $0.attribute("gateway.request_id") as? String == requestID }
        }
        try await eventually(timeout: .seconds(10)) { server("path-proxied") != nil && server("path-unmatched") != nil }
        let leaked = receiver.spans.filter { "\($0.fields)".contains(phone) }
        #expect(leaked.isEmpty, "spans hold the path's phone number: \(leaked.map(\.fields))")
        let route = try #require(server("path-proxied"))
        #expect(route.attribute("url.path") == nil)
        #expect(route.attribute("http.route") as? String == "user")
        #expect(route.name == "GET user")
        let none = try #require(server("path-unmatched"))
        #expect(none.attribute("url.path") == nil)
        #expect(none.attribute("http.route") as? String == "unmatched")
    }
}

