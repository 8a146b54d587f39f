import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing
import TestSupport

/// What the gateway answers when an upstream is slow or gone, and how request bodies are held
/// to `max_body_bytes`: real gateway, echo upstream and Redis processes.
@Suite("Proxy: upstream failures and bodies", .serialized, .timingSensitive)
struct ProxyFailureTests {
    private static func yaml(redis: RedisServer, maxBodyBytes: Int? = nil, routes: String) -> String {
        var text = DriverYAML.make(redis: redis)
        if let maxBodyBytes { text += "max_body_bytes: \(maxBodyBytes)\n" }
        text += "routes:\n" + routes + "\n"
        return text
    }

    /// Sends `bytes` bytes of body, either with a known length (Content-Length) or as a
    /// chunked stream of unknown length.
    private static func send(_ url: String, bytes: Int, chunked: Bool) async throws -> DriverResponse {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        if chunked {
            let chunkSize = 64 * 1024
            let chunks = stride(from: 0, to: bytes, by: chunkSize).map { ByteBuffer(repeating: UInt8(ascii: "a"), count: min(chunkSize, bytes - $0)) }
            let stream = AsyncStream<ByteBuffer> { continuation in
                for chunk in chunks { continuation.yield(chunk) }
                continuation.finish()
            }
            request.body = .stream(stream, length: .unknown)
        } else {
            request.body = .bytes(ByteBuffer(repeating: UInt8(ascii: "a"), count: bytes))
        }
        let clock = ContinuousClock()
        let start = clock.now
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 4 << 20)
        return DriverResponse(status: response.status.code, text: String(buffer: body), headers: response.headers, elapsed: clock.now - start)
    }

    @Test func slowUpstreamAnswers504WithinTheRouteTimeout() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, routes: """
          - {name: slow, path_prefix: /slow, upstream: \(upstream.url), auth: none, timeout: 500ms}
        """))

        let fast = try await DriverHTTP.call(gateway.baseURL + "/slow/x")
        #expect(fast.status == 200)
        let answer = try await DriverHTTP.call(gateway.baseURL + "/slow/x?delay_ms=3000")
        print("ProxyFailureTests: slow upstream answered \(answer.status) in \(answer.elapsed)")
        let metrics = try await DriverAPI.admin(gateway, .GET, "/metrics")
        #expect(metrics.text.contains(#"gateway_upstream_responses_total{route="slow",status="200"} 1"#), "\(metrics.text)")
        #expect(metrics.text.contains(#"gateway_upstream_errors_total{route="slow",kind="timeout"} 1"#), "\(metrics.text)")
        #expect(metrics.text.contains(#"gateway_upstream_duration_seconds_count{route="slow"} 1"#), "\(metrics.text)")
        #expect(answer.status == 504, "\(answer)")
        #expect(answer.code == "UPSTREAM_TIMEOUT", "\(answer)")
        #expect(answer.isErrorShape, "\(answer)")
        #expect(answer.elapsed >= .milliseconds(450), "answered too early: \(answer.elapsed)")
        #expect(answer.elapsed < .milliseconds(700), "answered later than the timeout + 200 ms: \(answer.elapsed)")
    }

    @Test func closedUpstreamPortAnswers502() async throws {
        let redis = try await RedisServer()
        let closedPort = LoopbackPort.free()
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, routes: """
          - {name: gone, path_prefix: /gone, upstream: "http://127.0.0.1:\(closedPort)", auth: none}
        """))

        let answer = try await DriverHTTP.call(gateway.baseURL + "/gone/x")
        print("ProxyFailureTests: closed upstream answered \(answer.status) in \(answer.elapsed)")
        #expect(answer.status == 502, "\(answer)")
        #expect(answer.code == "UPSTREAM_UNAVAILABLE", "\(answer)")
        #expect(answer.isErrorShape, "\(answer)")
        // A refused connect fails at once; nothing waits for the connect timeout.
        #expect(answer.elapsed < .milliseconds(500), "\(answer.elapsed)")

        let metrics = try await DriverAPI.admin(gateway, .GET, "/metrics")
        #expect(metrics.text.contains(#"gateway_upstream_errors_total{route="gone",kind="refused"} 1"#), "\(metrics.text)")
    }

    @Test func fiveMebibyteBodyReachesTheUpstreamWhole() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, maxBodyBytes: 10_485_760, routes: """
          - {name: upload, path_prefix: /upload, upstream: \(upstream.url), auth: none}
        """))

        let size = 5 * 1_048_576
        let answer = try await Self.send(gateway.baseURL + "/upload/file", bytes: size, chunked: false)
        print("ProxyFailureTests: 5 MiB body answered \(answer.status) in \(answer.elapsed), echo body_bytes=\(answer.json["body_bytes"] ?? "nil")")
        #expect(answer.status == 200, "\(answer)")
        #expect(answer.json["body_bytes"] as? Int == size, "\(answer)")
        #expect(answer.json["method"] as? String == "POST", "\(answer)")
    }

    @Test func aBodyUnderTheLimitArrivesIntact() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, maxBodyBytes: 1_048_576, routes: """
          - {name: upload, path_prefix: /upload, upstream: \(upstream.url), auth: none}
        """))
        for chunked in [false, true] {
            let answer = try await Self.send(gateway.baseURL + "/upload/half", bytes: 512 * 1024, chunked: chunked)
            print("ProxyFailureTests: 512 KiB body (chunked: \(chunked)) answered \(answer.status), echo body_bytes=\(answer.json["body_bytes"] ?? "nil")")
            #expect(answer.status == 200, "\(answer)")
            #expect(answer.json["body_bytes"] as? Int == 512 * 1024, "\(answer)")
        }
    }

    @Test func bodyOverTheLimitIsRefusedWith413() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, maxBodyBytes: 1_048_576, routes: """
          - {name: upload, path_prefix: /upload, upstream: \(upstream.url), auth: none}
        """))
        let size = 2 * 1_048_576

        let declared = try await Self.send(gateway.baseURL + "/upload/declared", bytes: size, chunked: false)
        print("ProxyFailureTests: 2 MiB with Content-Length answered \(declared.status) in \(declared.elapsed)")
        #expect(declared.status == 413, "\(declared)")
        #expect(declared.code == "PAYLOAD_TOO_LARGE", "\(declared)")
        #expect(declared.isErrorShape, "\(declared)")

        // Chunked, no Content-Length: refused while it streams (or the connection is cut).
        do {
            let chunked = try await Self.send(gateway.baseURL + "/upload/chunked", bytes: size, chunked: true)
            print("ProxyFailureTests: 2 MiB chunked answered \(chunked.status) in \(chunked.elapsed): \(chunked.text.prefix(200))")
            #expect(chunked.status == 413, "\(chunked)")
            #expect(chunked.code == "PAYLOAD_TOO_LARGE", "\(chunked)")
        } catch {
            print("ProxyFailureTests: 2 MiB chunked: connection aborted: \(error)")
        }
    }

    @Test func noRouteAnswers404() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, routes: """
          - {name: only, path_prefix: /only, upstream: \(upstream.url), auth: none}
        """))

        let answer = try await DriverHTTP.call(gateway.baseURL + "/nowhere/x")
        #expect(answer.status == 404, "\(answer)")
        #expect(answer.code == "NOT_FOUND", "\(answer)")
        #expect(answer.isErrorShape, "\(answer)")
        #expect(!upstream.log.contains("/nowhere"), "\(upstream.log)")
    }

    /// A route timeout (1s) shorter than `server.body_read_timeout` (2s): a client that sends
    /// half its body and stalls is the one late, `408`, never blamed on the upstream; an
    /// upstream slower than the route timeout once the body is in is still `504`.
    @Test func aStalledRequestBodyIs408AndASlowUpstreamStill504() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, routes: """
          - {name: upload, path_prefix: /upload, upstream: \(upstream.url), auth: none, timeout: 1s}
        """) + "server: {body_read_timeout: 2s}\n")

        let head = "POST /upload/x HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n"
        let clock = ContinuousClock()
        let started = clock.now
        let stalled = try await RawClient.exchange(port: gateway.port, send: head + String(repeating: "a", count: 50), readTimeout: 6)
        let elapsed = clock.now - started
        print("ProxyFailureTests: half a body then a stall answered \(stalled.status ?? 0) after \(elapsed)")
        #expect(stalled.status == 408, "\(stalled.text)")
        #expect(stalled.body.contains(#""code":"REQUEST_TIMEOUT""#), "\(stalled.text)")
        #expect(elapsed >= .milliseconds(1900), "answered before the body read timeout: \(elapsed)")

        let slow = try await DriverHTTP.call(gateway.baseURL + "/upload/x?delay_ms=3000", method: .POST, body: #"{"a":1}"#)
        #expect(slow.status == 504, "\(slow)")
        #expect(slow.code == "UPSTREAM_TIMEOUT", "\(slow)")
        #expect(slow.elapsed < .milliseconds(2500), "\(slow.elapsed)")
        let metrics = try await DriverAPI.admin(gateway, .GET, "/metrics")
        #expect(metrics.text.contains(#"gateway_upstream_errors_total{route="upload",kind="timeout"} 1"#), "\(metrics.text)")
    }
}

