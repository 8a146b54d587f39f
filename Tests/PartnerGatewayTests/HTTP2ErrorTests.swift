import Foundation
import Testing
import TestSupport

/// HTTP/2's error cases on the TLS listener (docs/tls.md): a request the gateway can answer
/// gets the error shape with the status an HTTP/1.1 request would get; a stream the protocol
/// calls malformed is reset (`PROTOCOL_ERROR`); only a header block the decoder cannot take
/// ends the connection (GOAWAY). Every case is followed by an ordinary request on the same
/// connection, which must still be answered.
@Suite("TLS: HTTP/2 errors", .serialized, .realProcesses)
struct HTTP2ErrorTests {
    /// A gateway with TLS, a small header and body limit, and an open route to the echo upstream.
    private struct Setup {
        /// Held: the probe reads the CA's file from its folder.
        let certificates: TestCertificates
        let redis: RedisServer
        let gateway: GatewayProcess
        let upstream: EchoUpstreamProcess
        let probe: HTTP2Probe
        /// The ordinary request each case is followed by.
        static let ordinary = HTTP2Probe.Stream.request("GET", "/open/ordinary")

        init() async throws {
            certificates = try await TestCertificates()
            let server = try await certificates.issue("gateway")
            redis = try await RedisServer()
            upstream = try await EchoUpstreamProcess()
            gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: """
                tls: {cert_file: \(server.certFile), key_file: \(server.keyFile)}
                max_body_bytes: 1000
                server: {max_header_bytes: 4096}
                routes:
                  - {name: open, path_prefix: /open, upstream: \(upstream.url), auth: none}
                """))
            probe = HTTP2Probe(port: gateway.port, caFile: certificates.caFile)
        }

        /// Sends `stream` then the ordinary request on one connection; expects the latter answered.
        func send(_ stream: HTTP2Probe.Stream) async throws -> HTTP2Probe.StreamOutcome {
            let outcome = try await probe.exchange([stream, Self.ordinary])
            #expect(outcome.goaway == nil, "\(outcome)")
            #expect(outcome.streams.count == 2 && outcome.streams[1].status == 200, "the connection did not go on: \(outcome)")
            return try #require(outcome.streams.first)
        }
    }

    @Test func malformedHeadsAreResetWithProtocolErrorAndTheConnectionGoesOn() async throws {
        let setup = try await Setup()
        defer { setup.upstream.stop() }
        let authority = [[":scheme", "https"], [":authority", "127.0.0.1"]]
        let malformed: [String: HTTP2Probe.Stream] = [
            "no :path": .init(headers: [[":method", "GET"]] + authority),
            "no :method": .init(headers: [[":path", "/open/x"]] + authority),
            "an upper-case field name": .request("GET", "/open/x", [["X-Upper", "1"]]),
            "a connection-specific field": .request("GET", "/open/x", [["connection", "keep-alive"]]),
            "a line break in a value": .request("GET", "/open/x", [["x-split", "a\r\nx-injected: 1"]]),
            "a body longer than its content-length": .request("POST", "/open/x", [["content-length", "2"]], body: "abc"),
            "a pseudo-field after a regular one": .init(headers: [[":method", "GET"], ["accept", "*/*"], [":path", "/open/x"]] + authority),
            "te other than trailers": .request("GET", "/open/x", [["te", "gzip"]]),
            "a line break in a trailer of a proxied stream": .request("POST", "/open/x", body: "abc", trailers: [["x-split", "a\r\nx-injected: 1"]]),
            "a pseudo-field in the trailers of an endpoint's stream": .request("POST", "/healthz", body: "{}", trailers: [[":path", "/"]]),
        ]
        for (name, stream) in malformed {
            let answer = try await setup.send(stream)
            #expect(answer.reset == HTTP2Probe.protocolError, "\(name): \(answer)")
            #expect(answer.status == nil, "\(name): \(answer)")
        }
        #expect(!setup.upstream.log.contains("x-injected"))
        #expect(setup.gateway.process.isRunning)
    }

    @Test func aConnectionThatKeepsSendingMalformedHeadsIsClosedWithEnhanceYourCalm() async throws {
        let setup = try await Setup()
        defer { setup.upstream.stop() }
        let malformed = HTTP2Probe.Stream.request("GET", "/open/x", [["Upper", "1"]])
        let outcome = try await setup.probe.exchange(Array(repeating: malformed, count: 200) + [Setup.ordinary])
        #expect(outcome.goaway == HTTP2Probe.enhanceYourCalm, "\(outcome.goaway.map(String.init) ?? "no GOAWAY")")
        #expect(outcome.streams.dropLast().allSatisfy { $0.status == nil })
        // One fewer and the connection goes on.
        let tolerated = try await setup.probe.exchange(Array(repeating: malformed, count: 199) + [Setup.ordinary])
        #expect(tolerated.goaway == nil && tolerated.streams.last?.status == 200, "\(tolerated.goaway.map(String.init) ?? "no GOAWAY")")
    }

    @Test func requestsTheEdgeRulesRefuseAreAnsweredInTheErrorShape() async throws {
        let setup = try await Setup()
        defer { setup.upstream.stop() }
        let refused: [String: HTTP2Probe.Stream] = [
            "an encoded slash": .request("GET", "/open/%2e%2e/%2fadmin"),
            "a target that is not a path": .request("GET", "open/x"),
            "two API keys": .request("GET", "/open/x", [["x-api-key", "a"], ["x-api-key", "b"]]),
        ]
        for (name, stream) in refused {
            let answer = try await setup.send(stream)
            #expect(answer.status == 400, "\(name): \(answer)")
            #expect(answer.errorCode == "INVALID_REQUEST", "\(name): \(answer)")
        }
        #expect(setup.upstream.receivedPaths.allSatisfy { $0 == "/open/ordinary" }, "\(setup.upstream.receivedPaths)")
    }

    @Test func headersOverTheLimitAre431UntilTheDecoderMustRefuseTheConnection() async throws {
        let setup = try await Setup()
        defer { setup.upstream.stop() }
        // Over server.max_header_bytes (4096): 431 in the error shape, to a route and to an endpoint.
        for path in ["/open/x", "/healthz"] {
            let answer = try await setup.send(.request("GET", path, [["x-large", String(repeating: "a", count: 5000)]]))
            #expect(answer.status == 431, "\(path): \(answer)")
            #expect(answer.errorCode == "HEADERS_TOO_LARGE", "\(path): \(answer)")
        }
        #expect(!setup.upstream.receivedPaths.contains("/open/x"))

        // Beyond what the HPACK decoder takes: the connection ends (GOAWAY; PROTOCOL_ERROR or
        // COMPRESSION_ERROR, depending on where NIOHTTP2 sees it), the gateway goes on.
        let outcome = try await setup.probe.exchange([
            .request("GET", "/open/x", [["x-huge", String(repeating: "a", count: 70_000)]]), Setup.ordinary,
        ])
        #expect(outcome.goaway == HTTP2Probe.protocolError || outcome.goaway == HTTP2Probe.compressionError, "\(outcome)")
        #expect(outcome.streams.first?.status == nil, "\(outcome)")
        let next = try await setup.probe.exchange([Setup.ordinary])
        #expect(next.streams.first?.status == 200, "\(next)")
    }

    @Test func aBodyOverMaxBodyBytesIs413InTheErrorShape() async throws {
        let setup = try await Setup()
        defer { setup.upstream.stop() }
        let body = String(repeating: "b", count: 3000)
        let cases: [String: HTTP2Probe.Stream] = [
            "declared": .request("POST", "/open/declared", [["content-length", "3000"]], body: body),
            "undeclared": .request("POST", "/open/undeclared", body: body),
        ]
        for (name, stream) in cases {
            let answer = try await setup.send(stream)
            #expect(answer.status == 413, "\(name): \(answer)")
            #expect(answer.errorCode == "PAYLOAD_TOO_LARGE", "\(name): \(answer)")
        }
        #expect(!setup.upstream.receivedPaths.contains("/open/declared"))
    }

    /// Only a stream the router does not own gets the way to Hummingbird
    /// (``EndpointStreamHandoff``): proxied streams, the gateway's own endpoints and a path
    /// nothing serves, taking turns on one connection, each get their own response.
    @Test func proxiedAndEndpointStreamsTakeTurnsOnOneConnection() async throws {
        let setup = try await Setup()
        defer { setup.upstream.stop() }
        let outcome = try await setup.probe.exchange([
            .request("GET", "/open/first"),
            .request("GET", "/healthz"),
            .request("POST", "/open/second", [["content-length", "2"]], body: "{}"),
            .request("GET", "/nowhere"),
            .request("POST", "/auth/otp/trigger", [["content-type", "application/json"]], body: "{"),
            Setup.ordinary,
        ])
        #expect(outcome.goaway == nil, "\(outcome)")
        #expect(outcome.streams.map(\.status) == [200, 200, 200, 404, 400, 200], "\(outcome)")
        #expect(outcome.streams[1].json["status"] != nil, "\(outcome)")
        #expect(outcome.streams[3].errorCode != nil, "\(outcome)")
        #expect(outcome.streams[4].errorCode != nil, "\(outcome)")
        #expect(setup.upstream.receivedPaths == ["/open/first", "/open/second", "/open/ordinary"], "\(setup.upstream.receivedPaths)")
    }

    @Test func aStreamResetMidBodyEndsOnlyThatStream() async throws {
        let setup = try await Setup()
        defer { setup.upstream.stop() }
        for path in ["/open/upload", "/auth/otp/trigger"] {
            let outcome = try await setup.probe.exchange([
                .request("POST", path, [["content-length", "900"], ["content-type", "application/json"]], body: #"{"phone":"#, reset: true),
                Setup.ordinary,
            ])
            #expect(outcome.goaway == nil, "\(path): \(outcome)")
            #expect(outcome.streams.last?.status == 200, "\(path): \(outcome)")
        }
        #expect(setup.gateway.process.isRunning)
        #expect(!setup.gateway.log.contains("\"level\":\"error\""), "\(setup.gateway.log)")
    }
}
