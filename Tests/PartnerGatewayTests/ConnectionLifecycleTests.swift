import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// The connection rules ``HTTP1ConnectionHandler`` applies to every request, including those
/// the proxy engine answers without Hummingbird seeing them: responses in request
/// order on a keep-alive connection, the idle timeout, and an idle timeout that never closes
/// a connection in use. Raw TCP against a real gateway, so nothing pools or reorders.
@Suite("Public listener: keep-alive, pipelining and idle connections", .realProcesses)
struct ConnectionLifecycleTests {
    private func yaml(redis: RedisServer, upstream: EchoUpstreamProcess, idleTimeout: String = "60s") -> String {
        TestConfig.yaml(redisURL: redis.url, extra: """
            server: {idle_timeout: \(idleTimeout), header_read_timeout: 5s}
            routes:
              - {name: echo, path_prefix: /echo, upstream: \(upstream.url), auth: none, timeout: 10s}
            """)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: yaml(redis: redis, upstream: upstream))
        // Proxied on the event loop, answered by Hummingbird, proxied again (the first one
        // slow, so the later responses are ready before it), all in one write.
        let request = "GET /echo/first?delay_ms=200 HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /echo/third HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /echo/fourth HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        let reply = try await RawClient.exchange(port: gateway.port, send: request, readTimeout: 10)
        #expect(reply.closed)
        #expect(reply.text.components(separatedBy: "HTTP/1.1 200 ").count == 5, "\(reply.text)")
        // The echo's JSON escapes slashes.
        let markers = [#""path":"\/echo\/first""#, #""status":"ok""#, #""path":"\/echo\/third""#, #""path":"\/echo\/fourth""#]
        let positions = markers.map { reply.text.range(of: $0)?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil }, "\(reply.text)")
        let found = positions.compactMap { $0 }
        #expect(found == found.sorted(), "answers out of order: \(reply.text)")
    }

    /// A client that half-closes after its requests (shuts its sending side) gets every
    /// response, then the connection closes: a proxied one still under way is not cut, and a
    /// connection that never reached the gateway's own endpoints is not left open.
    @Test(arguments: [
        "GET /echo/slow?delay_ms=300 HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /echo/one HTTP/1.1\r\nHost: x\r\n\r\nGET /echo/two?delay_ms=200 HTTP/1.1\r\nHost: x\r\n\r\n",
    ])
    func aHalfClosedConnectionIsAnsweredThenClosed(request: String) async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: yaml(redis: redis, upstream: upstream))
        let reply = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    let fd = try RawClient.connectedSocket(port: gateway.port, readTimeout: 5)
                    defer { close(fd) }
                    _ = RawClient.sendAll(fd, request)
                    shutdown(fd, Int32(SHUT_WR))
                    return RawClient.readUntilClosed(fd)
                })
            }
        }
        let requests = request.components(separatedBy: "GET ").count - 1
        #expect(reply.text.components(separatedBy: "HTTP/1.1 200 ").count - 1 == requests, "\(reply.text)")
        #expect(reply.closed, "the connection stayed open")
    }

    /// After answering `Connection: close` or an HTTP/1.0 request without keep-alive, the
    /// connection closes, whether the request was proxied or answered by the gateway itself.
    @Test(arguments: [
        "GET /echo/close HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        "GET /echo/old HTTP/1.0\r\nHost: x\r\n\r\n",
        "GET /healthz HTTP/1.0\r\nHost: x\r\n\r\n",
    ])
    func theConnectionClosesWhenTheClientDoesNotKeepItAlive(request: String) async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: yaml(redis: redis, upstream: upstream))
        // Reads until the server closes, or gives up after 3 s with the connection open.
        let reply = try await RawClient.exchange(port: gateway.port, send: request, readTimeout: 3)
        #expect(reply.status == 200, "\(reply.text)")
        #expect(reply.closed, "the connection stayed open")
    }

    /// A request answered before its body was read (`/healthz` ignores one) must not lose its
    /// answer to a reset when the connection closes after it: the client here sends more of
    /// the body once the response has arrived, before reading it.
    @Test func closingAfterAResponseDoesNotResetTheConnectionUnderAnUnreadBody() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: yaml(redis: redis, upstream: upstream))
        let chunk = String(repeating: "x", count: 64 * 1024)
        let head = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: \(4 * chunk.utf8.count)\r\n\r\n"
        let (reply, rest) = try await RawClient.responseThenMoreBody(
            port: gateway.port, first: head + chunk, afterResponse: String(repeating: chunk, count: 3)
        )
        // A client such as curl sends its whole body before reading: a reset while it sends
        // is a failed request, even with the response waiting in its buffer.
        #expect(rest == "sent", "the rest of the body: \(rest)")
        #expect(reply.status == 200, "\(reply.text.prefix(300))")
        #expect(reply.text.contains(#"{"status":"ok"}"#))
        #expect(reply.closed)
    }

    @Test func anIdleKeepAliveConnectionIsClosedAfterTheIdleTimeout() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: yaml(redis: redis, upstream: upstream, idleTimeout: "1s"))
        let (statuses, closedAfter) = try await RawClient.requestsThenIdle(port: gateway.port, requests: [RawClient.get("/echo/a")], every: .zero)
        print("ConnectionLifecycleTests: idle keep-alive connection closed \(closedAfter.map { "\($0)" } ?? "never") after its last response (idle_timeout 1s)")
        #expect(statuses == [200])
        let closed = try #require(closedAfter, "the idle connection was not closed")
        #expect(closed >= .milliseconds(900) && closed < .seconds(4), "\(closed)")
    }

    @Test func aConnectionInUseIsNotClosedAsIdle() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: yaml(redis: redis, upstream: upstream, idleTimeout: "1s"))
        // Ten proxied requests 300 ms apart: 3 s of use, three idle timeouts long, on one
        // connection that must stay open throughout.
        let requests = (1...10).map { RawClient.get("/echo/\($0)") }
        let (statuses, closedAfter) = try await RawClient.requestsThenIdle(port: gateway.port, requests: requests, every: .milliseconds(300))
        #expect(statuses == Array(repeating: 200, count: 10), "\(statuses)")
        let closed = try #require(closedAfter, "the connection was not closed once idle")
        #expect(closed >= .milliseconds(900), "\(closed)")
    }
}

extension ConnectionLifecycleTests {
    /// An upstream that responses the first request on each connection and closes the
    /// connection, unannounced and unanswered, when a second request arrives on it: what a
    /// pooled connection looks like when the upstream closed it just as it was reused.
    static let closesReusedConnections = """
        def serve(connection):
            answered = 0
            for _ in request_heads(connection):
                if answered:
                    break
                answered += 1
                connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nok")
            connection.close()
        """

    @Test func aRequestOnAStalePooledConnectionIsRetriedOnlyWhenIdempotent() async throws {
        let redis = try await RedisServer()
        let upstream = try await ScriptedUpstream(serving: Self.closesReusedConnections)
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: TestConfig.yaml(redisURL: redis.url, extra: """
            routes:
              - {name: flaky, path_prefix: /flaky, upstream: "\(upstream.url)", auth: none, timeout: 5s}
            """))
        // One client connection, so every request runs on one event loop and its pool:
        // the first GET opens an upstream connection; the second reuses it, finds it closed
        // and is sent again on a new one; a body-less POST must not be sent twice.
        let requests = [
            RawClient.get("/flaky/first"), RawClient.get("/flaky/second"),
            "POST /flaky/third HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
        ]
        let (statuses, _) = try await RawClient.requestsThenIdle(port: gateway.port, requests: requests, every: .milliseconds(50), awaitClose: false)
        #expect(statuses == [200, 200, 502], "\(statuses)")
    }
}

extension RawClient {
    /// A keep-alive `GET` of `path`.
    static func get(_ path: String) -> String {
        "GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n"
    }

    /// On one keep-alive connection, sends each of `requests` (`every` apart) and reads each
    /// answer; then waits for the server to close the connection. The statuses, and how long
    /// after the last answer the connection closed (nil if not within 10 s).
    static func requestsThenIdle(
        port: Int, requests: [String], every interval: Duration, awaitClose: Bool = true
    ) async throws -> ([Int], Duration?) {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    let fd = try connectedSocket(port: port, readTimeout: 10)
                    defer { close(fd) }
                    var statuses: [Int] = []
                    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
                    for (index, request) in requests.enumerated() {
                        if index > 0 { Thread.sleep(forTimeInterval: Double(interval.components.attoseconds) / 1e18 + Double(interval.components.seconds)) }
                        let bytes = Array(request.utf8)
                        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                        var received: [UInt8] = []
                        while !Self.isCompleteResponse(received) {
                            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                            guard n > 0 else { return (statuses, Duration.zero) }
                            received.append(contentsOf: buffer[0..<n])
                        }
                        let text = String(decoding: received, as: UTF8.self)
                        statuses.append(Int(text.dropFirst(9).prefix(3)) ?? 0)
                    }
                    guard awaitClose else { return (statuses, nil) }
                    let clock = ContinuousClock()
                    let started = clock.now
                    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    let closed = n == 0 || (n < 0 && errno == ECONNRESET)
                    return (statuses, closed ? clock.now - started : nil)
                })
            }
        }
    }

    /// Sends `first`, waits until a response is ready to read, sends `afterResponse` (the server
    /// may have closed by then), then reads everything until the connection closes. The reply,
    /// and "sent" or why sending `afterResponse` failed.
    static func responseThenMoreBody(port: Int, first: String, afterResponse: String) async throws -> (Reply, String) {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    let fd = try connectedSocket(port: port, readTimeout: 10)
                    defer { close(fd) }
                    _ = sendAll(fd, first)
                    var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    _ = poll(&ready, 1, 10_000)
                    let rest = sendAll(fd, afterResponse)
                    return (readUntilClosed(fd), rest)
                })
            }
        }
    }

    /// Whether `bytes` hold a whole response with a `Content-Length` body.
    static func isCompleteResponse(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let headEnd = text.range(of: "\r\n\r\n") else { return false }
        let head = text[..<headEnd.lowerBound].lowercased()
        guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
              let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { return false }
        return text.utf8.count - text.utf8.distance(from: text.startIndex, to: headEnd.upperBound) >= length
    }
}
