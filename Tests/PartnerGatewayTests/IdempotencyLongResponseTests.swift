import Foundation
import Testing
import TestSupport

/// A keyed `POST` whose response streams for longer than its lock's lifetime (the route's
/// `timeout` per try and 5 s: 7 s here) keeps its lock while the response is in flight: a
/// retry after that lifetime is `409`, never a second call upstream.
@Suite("Idempotency: a long response keeps its lock (processes)", .realProcesses)
struct IdempotencyLongResponseTests {
    @Test func aRetryDuringALongResponseIsRefusedNotForwardedAgain() async throws {
        let redis = try await RedisServer()
        defer { redis.kill() }
        // Answers each call with a chunked body that takes 9 s to end, a chunk every half second.
        let upstream = try await ScriptedUpstream(serving: """
            import time
            def serve(connection):
                for head in request_heads(connection):
                    print("call", flush=True)
                    connection.sendall(b"HTTP/1.1 200 OK\\r\\ntransfer-encoding: chunked\\r\\ncontent-type: text/plain\\r\\n\\r\\n")
                    for _ in range(18):
                        connection.sendall(b"2\\r\\nok\\r\\n")
                        time.sleep(0.5)
                    connection.sendall(b"0\\r\\n\\r\\n")
            """)
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis) + """
            routes:
              - {name: slow, path_prefix: /slow, upstream: "\(upstream.url)", auth: none, timeout: 1s, idempotency: {ttl: 1h}}

            """)
        defer { gateway.kill() }

        let headers = [("Idempotency-Key", "long-response-1")]
        let first = Task { try await DriverHTTP.call(gateway.baseURL + "/slow/rides", method: .POST, headers: headers, body: "") }
        try await eventually(timeout: .seconds(10)) { upstream.log.contains("call") }
        let called = Date()
        // Past the lock's 7 s lifetime, while the first response is still streaming.
        try await Task.sleep(for: .seconds(7.5))
        let retry = try await DriverHTTP.call(gateway.baseURL + "/slow/rides", method: .POST, headers: headers, body: "")
        let retriedAfter = Date().timeIntervalSince(called)
        #expect(retry.status == 409, "a retry \(retriedAfter) s into the first response: \(retry.status) \(retry.text)")
        let answer = try await first.value
        #expect(answer.status == 200 && answer.text == String(repeating: "ok", count: 18), "\(answer.status) \(answer.text.prefix(80))")
        let calls = upstream.log.split(separator: "\n").filter { $0 == "call" }.count
        #expect(calls == 1, "the upstream was called \(calls) times for one Idempotency-Key")
    }
}
