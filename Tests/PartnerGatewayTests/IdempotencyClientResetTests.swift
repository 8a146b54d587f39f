import Foundation
import Testing
import TestSupport

/// A keyed `POST` whose client resets its connection once the upstream has the request: the
/// exchange runs on without the client, the answer is stored, and the app's retry is replayed
/// it. The key is never freed for a second call upstream. A request without a key whose client
/// resets is still logged, as `499`.
@Suite("Idempotency: a client that resets keeps its key (processes)", .realProcesses)
struct IdempotencyClientResetTests {
    @Test func aRetryAfterTheClientResetIsReplayedNotForwardedAgain() async throws {
        let redis = try await RedisServer()
        defer { redis.kill() }
        let folder = try TemporaryFolder("pg-idem-reset")
        let release = folder.path("_pay_charge")
        // Holds each call (its whole body read) until the test creates a file named after its
        // target (`/pay/charge`: `_pay_charge`), then answers.
        let upstream = try await ScriptedUpstream(serving: """
            import os, time
            def serve(connection):
                for head, _ in requests(connection):
                    print("call", flush=True)
                    target = head.split(b" ")[1].decode().replace("/", "_")
                    while not os.path.exists(os.path.join(\(String(reflecting: folder.path)), target)):
                        time.sleep(0.02)
                    answer = b"charged once"
                    connection.sendall(b"HTTP/1.1 201 Created\\r\\ncontent-length: %d\\r\\n\\r\\n%s" % (len(answer), answer))
            """)
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis) + """
            routes:
              - {name: pay, path_prefix: /pay, upstream: "\(upstream.url)", auth: none, timeout: 30s, idempotency: {ttl: 1h}}

            """)
        defer { gateway.kill() }

        let body = #"{"amount": 120}"#
        func post(_ target: String, key: String?) -> String {
            "POST \(target) HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                + (key.map { "Idempotency-Key: \($0)\r\n" } ?? "") + "\r\n" + body
        }
        // Sends the request, waits for the upstream to have it (calls seen reach `calls`), then
        // resets the connection (SO_LINGER 0): an app killed, or a phone dropping off the network.
        func sendAndReset(_ request: String, calls: Int) async throws {
            let reset = try await ShortCommand.run("/usr/bin/python3", ["-c", """
                import socket, struct, sys, time
                client = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
                client.sendall(sys.argv[2].encode())
                deadline = time.time() + 20
                while open(sys.argv[3]).read().count("call") < int(sys.argv[4]):
                    if time.time() > deadline:
                        sys.exit("the upstream never had the request")
                    time.sleep(0.02)
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                client.close()
                """, String(gateway.port), request, upstream.logPath, String(calls)])
            try #require(reset.status == 0, "\(reset.stderr)")
        }

        try await sendAndReset(post("/pay/charge", key: "charge-7"), calls: 1)
        // The upstream still holds the first call: the retry waits its turn.
        let during = try await DriverHTTP.call(gateway.baseURL + "/pay/charge", method: .POST, headers: [("Idempotency-Key", "charge-7")], body: body)
        #expect(during.status == 409, "\(during.status) \(during.text)")

        FileManager.default.createFile(atPath: release, contents: Data())
        try await eventually(timeout: .seconds(10)) {
            let names = try await redis.cli("--scan", "--pattern", "pg:idem:*").split(separator: "\n")
            guard let name = names.first else { return false }
            return try await redis.cli("GET", String(name)).hasPrefix("D")
        }
        let retry = try await DriverHTTP.call(gateway.baseURL + "/pay/charge", method: .POST, headers: [("Idempotency-Key", "charge-7")], body: body)
        #expect(retry.status == 201 && retry.text == "charged once", "\(retry.status) \(retry.text)")
        #expect(retry.header("Idempotent-Replayed") == "true")
        #expect(upstream.log.components(separatedBy: "call").count - 1 == 1, "one call upstream: \(upstream.log)")

        // Without a key the exchange ends with its client (the upstream never answers this
        // one), and still has its access line.
        try await sendAndReset(post("/pay/refund", key: nil), calls: 2)
        try await eventually(timeout: .seconds(10)) {
            gateway.log.split(separator: "\n").contains { $0.contains(#""msg":"request""#) && $0.contains(#""status":499"#) }
        }
    }
}
