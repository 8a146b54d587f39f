import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// Slow or oversized clients are cut off, and no request smuggling. Raw TCP
/// against a real gateway process, since HTTP clients refuse to send these requests.
@Suite("Public listener: client protections", .realProcesses)
struct ClientProtectionTests {
    private func yaml(redis: RedisServer, upstream: EchoUpstreamProcess, extra: String = "") -> String {
        """
        redis:
          url: \(redis.url)
          timeout: \(GatewayProcess.redisTimeout)
        otp:
          mode: uat
        log:
          access_log: false
        routes:
          - {name: echo, path_prefix: /echo, upstream: \(upstream.url), auth: none, timeout: 10s}
        \(extra)
        """
    }

    @Test func oversizedHeadersGet431AndTheConnectionCloses() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: yaml(redis: redis, upstream: upstream))
        let big = String(repeating: "a", count: 100 * 1024)
        let reply = try await RawClient.exchange(port: gateway.port, send: "GET /echo/big HTTP/1.1\r\nHost: x\r\nX-Big: \(big)\r\n\r\n")
        #expect(reply.status == 431, "\(reply.text.prefix(300))")
        #expect(reply.closed)
        let body = try JSONDecoder().decode(ErrorBody.self, from: Data(reply.body.utf8))
        #expect(body.error.code == "HEADERS_TOO_LARGE")
        #expect(!upstream.log.contains("received GET /echo/big"))
    }

    @Test func contentLengthWithTransferEncodingIsRefused() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: yaml(redis: redis, upstream: upstream))
        let request = "POST /echo/smuggle HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "0\r\n\r\nGET /echo/smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
        let reply = try await RawClient.exchange(port: gateway.port, send: request)
        #expect(reply.status == 400, "\(reply.text.prefix(300))")
        #expect(reply.closed)
        #expect(reply.text.components(separatedBy: "HTTP/1.1 ").count == 2, "exactly one response: \(reply.text)")
        // Give a wrongly forwarded request time to show up upstream.
        try await Task.sleep(for: .milliseconds(300))
        #expect(!upstream.log.contains("received POST /echo/smuggle"), "\(upstream.log)")
        #expect(!upstream.log.contains("/echo/smuggled"), "\(upstream.log)")
    }

    @Test func differingContentLengthsAreRefused() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: yaml(redis: redis, upstream: upstream))
        let request = "POST /echo/twice HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 10\r\n\r\nabcdabcdab"
        let reply = try await RawClient.exchange(port: gateway.port, send: request)
        #expect(reply.status == 400, "\(reply.text.prefix(300))")
        #expect(reply.closed)
        try await Task.sleep(for: .milliseconds(300))
        #expect(!upstream.log.contains("received POST /echo/twice"), "\(upstream.log)")
    }

    @Test func aSlowHeaderClientIsCutOffWhileOthersAreServed() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        // The idle timeout is long, so only the header read timeout can close the slow client.
        let gateway = try await GatewayProcess(yaml: yaml(
            redis: redis, upstream: upstream, extra: "server:\n  header_read_timeout: 1s\n  idle_timeout: 60s"
        ))
        let clock = ContinuousClock()
        let started = clock.now
        async let slow = RawClient.exchange(port: gateway.port, send: "GET /echo/slow HTTP/1.1\r\nHost: x\r\nX-Partial: ", readTimeout: 15)
        try await Task.sleep(for: .milliseconds(200))
        let normal = try await RawClient.exchange(port: gateway.port, send: "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(normal.status == 200)
        let cut = try await slow
        let elapsed = clock.now - started
        #expect(cut.closed, "the slow client was not disconnected")
        #expect(cut.status == nil, "\(cut.text)")
        #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(8), "\(elapsed)")
        #expect(!upstream.log.contains("/echo/slow"))
    }
}

extension ClientProtectionTests {
    @Test func aSlowHeaderOnAKeepAliveConnectionIsCutOffToo() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: yaml(
            redis: redis, upstream: upstream, extra: "server:\n  header_read_timeout: 1s\n  idle_timeout: 60s"
        ))
        // One whole request, then the start of a second one that never finishes.
        let (firstStatus, sinceSecondStarted, closed) = try await RawClient.keepAliveThenStall(port: gateway.port)
        print("ClientProtectionTests: keep-alive connection with a stalled second head closed after \(sinceSecondStarted) (header_read_timeout 1s, idle_timeout 60s)")
        #expect(firstStatus == 200)
        #expect(closed, "the stalled connection was not closed")
        #expect(sinceSecondStarted >= .milliseconds(900) && sinceSecondStarted < .seconds(5), "\(sinceSecondStarted)")
    }
}

extension RawClient {
    /// Sends a whole `GET /healthz`, reads its response, then sends half of a second request
    /// head; the first response's status, how long after that the server closed, and whether it did.
    static func keepAliveThenStall(port: Int) async throws -> (Int?, Duration, Bool) {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    let fd = try connectedSocket(port: port, readTimeout: 10)
                    defer { close(fd) }
                    func send(_ text: String) {
                        let bytes = Array(text.utf8)
                        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    }
                    send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                    var buffer = [UInt8](repeating: 0, count: 16 * 1024)
                    var first: [UInt8] = []
                    while !String(decoding: first, as: UTF8.self).contains("}") {
                        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                        guard n > 0 else { break }
                        first.append(contentsOf: buffer[0..<n])
                    }
                    let text = String(decoding: first, as: UTF8.self)
                    let status = text.hasPrefix("HTTP/1.1 ") ? Int(text.dropFirst(9).prefix(3)) : nil
                    let clock = ContinuousClock()
                    let started = clock.now
                    send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Partial: ")
                    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    return (status, clock.now - started, n == 0 || (n < 0 && errno == ECONNRESET))
                })
            }
        }
    }
}
