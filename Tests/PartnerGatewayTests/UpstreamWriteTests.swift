import Testing
import TestSupport

/// How a proxied request is written to its upstream: a head and the body read with it leave
/// in one write, so the upstream wakes once per request instead of once per part. Seen from a
/// raw upstream that counts the data segments of each request (`tcpi_data_segs_in`; the
/// gateway's upstream connections set `TCP_NODELAY`, so every write is its own segment).
@Suite("Proxy: what an upstream receives per write", .realProcesses)
struct UpstreamWriteTests {
    /// Answers each request `200` with the number of data segments it arrived in, or `409`
    /// when that was more than one.
    static let countsSegments = """
        def data_segments_in(connection):
            info = connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
            return struct.unpack_from("I", info, 152)[0]  # struct tcp_info: tcpi_data_segs_in
        def serve(connection):
            data, counted = b"", 0
            while True:
                while b"\\r\\n\\r\\n" not in data:
                    chunk = connection.recv(65536)
                    if not chunk:
                        connection.close()
                        return
                    data += chunk
                head, data = data.split(b"\\r\\n\\r\\n", 1)
                length = 0
                for line in head.split(b"\\r\\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(data) < length:
                    data += connection.recv(65536)
                data = data[length:]
                now = data_segments_in(connection)
                segments, counted = now - counted, now
                body = str(segments).encode()
                status = b"200 OK" if segments == 1 else b"409 Conflict"
                connection.sendall(b"HTTP/1.1 " + status + b"\\r\\nContent-Length: " + str(len(body)).encode() + b"\\r\\n\\r\\n" + body)
        """

    @Test func aPostsHeadAndBodyReachTheUpstreamInOneWrite() async throws {
        let redis = try await RedisServer()
        let upstream = try await ScriptedUpstream(serving: Self.countsSegments)
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: TestConfig.yaml(redisURL: redis.url, extra: """
            routes:
              - {name: counted, path_prefix: /counted, upstream: "\(upstream.url)", auth: none, timeout: 5s}
            """))
        let body = #"{"pad":""# + String(repeating: "x", count: 1000) + #""}"#
        let post = "POST /counted/x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
        // One client connection, so one event loop and its pool: the first POST waits for a
        // new upstream connection, the later ones take it from the pool while the client's
        // read that brought them is still being handled (the path every busy connection takes).
        let (statuses, _) = try await RawClient.requestsThenIdle(
            port: gateway.port, requests: [post, post, post], every: .milliseconds(50), awaitClose: false
        )
        #expect(statuses == [200, 200, 200], "409: a request reached the upstream in more than one segment: \(statuses)")
    }
}
