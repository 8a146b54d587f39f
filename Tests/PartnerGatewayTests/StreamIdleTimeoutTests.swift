import Foundation
import Testing
import TestSupport

/// `timeout` bounds the wait for a response's head, `stream_idle_timeout` the silences after
/// it, through a real gateway (on a test clock: Tests/GatewayProxyTests/StreamIdleTimeoutTests.swift):
/// an event stream silent for longer than the route's `timeout` but shorter than its
/// `stream_idle_timeout` goes on; one silent for longer is cut.
@Suite("Proxy: server-sent events through the gateway", .serialized, .realProcesses)
struct ServerSentEventsProcessTests {
    @Test func aStreamQuieterThanTheTimeoutSurvivesAndOneQuieterThanTheStreamIdleTimeoutIsCut() async throws {
        let redis = try await RedisServer()
        defer { withExtendedLifetime(redis) {} }
        // Two events 1.5 s apart, then silence.
        let upstream = try await ScriptedUpstream(serving: """
            import time
            def serve(connection):
                for head in request_heads(connection):
                    connection.sendall(b"HTTP/1.1 200 OK\\r\\ncontent-type: text/event-stream\\r\\ntransfer-encoding: chunked\\r\\n\\r\\n")
                    for event in [b"data: one\\n\\n", b"data: two\\n\\n"]:
                        connection.sendall(b"%x\\r\\n%s\\r\\n" % (len(event), event))
                        time.sleep(1.5)
                    time.sleep(60)
                    return
            """)
        defer { upstream.stop() }
        let yaml = DriverYAML.make(redis: redis) + """
            routes:
              - {name: events, path_prefix: /events, upstream: \(upstream.url), auth: none, timeout: 500ms, stream_idle_timeout: 3s}

            """
        let gateway = try await GatewayProcess(yaml: yaml)
        let output = try await DriverPython.run(
            """
            import json, socket, sys, time
            sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
            sock.sendall(b"GET /events/feed HTTP/1.1\\r\\nHost: gw\\r\\nAccept: text/event-stream\\r\\n\\r\\n")
            started = time.monotonic()
            seen, data = {}, b""
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
                for name in [b"data: one", b"data: two"]:
                    if name in data and name.decode() not in seen:
                        seen[name.decode()] = time.monotonic() - started
            print(json.dumps({"seen": seen, "closed": time.monotonic() - started, "status": data.split(b"\\r\\n", 1)[0].decode()}))
            """,
            [String(gateway.port)]
        )
        let result = try DriverPython.jsonObject(output)
        let seen = try #require(result["seen"] as? [String: Double], "\(result)")
        let closed = try #require(result["closed"] as? Double)
        #expect((result["status"] as? String)?.hasPrefix("HTTP/1.1 200") == true, "\(result)")
        let one = try #require(seen["data: one"], "\(result)")
        let two = try #require(seen["data: two"], "the stream was cut by the route timeout: \(result)")
        // Each event reached the client when it was sent, not buffered until more came.
        #expect(one < 1.0, "\(result)")
        #expect(two >= 1.4, "\(result)")
        // Cut about stream_idle_timeout after the last event, long before the upstream gave up.
        #expect(closed - two >= 2.5 && closed - two < 20, "\(result)")
    }
}
