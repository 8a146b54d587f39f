import Foundation
import Testing
import TestSupport

/// The framing property over HTTP/2: for generated streams of every method the gateway
/// proxies, with a body or none, DATA in the same read as HEADERS or in later reads, with and
/// without `content-length`, with trailers, the upstream (``RecordingUpstream``, NIO's llhttp
/// parser) sees exactly one request per stream, its body byte for byte, and never one more.
/// Each body carries a whole request of its own that an upstream would run if the gateway
/// wrote the body without framing it (a `GET` with DATA and no `content-length` once did).
///
/// Seeded: `H2_FRAMING_SEED` and `H2_FRAMING_STREAMS` replay or widen a run; a failure prints both.
@Suite("Proxy: HTTP/2 request framing property (processes)", .realProcesses)
struct HTTP2FramingPropertyTests {
    static let seed = ProcessInfo.processInfo.environment["H2_FRAMING_SEED"].flatMap(UInt64.init) ?? 0x5EED_0002
    static let streams = ProcessInfo.processInfo.environment["H2_FRAMING_STREAMS"].flatMap(Int.init) ?? 2000

    @Test func theUpstreamSeesExactlyTheRequestsTheStreamsCarried() async throws {
        let certificates = try await TestCertificates()
        let server = try await certificates.issue("gateway")
        let redis = try await RedisServer()
        defer { redis.kill() }
        let upstream = try await RecordingUpstream()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis) + """
            tls: {cert_file: \(server.certFile), key_file: \(server.keyFile)}
            routes:
              - {name: open, path_prefix: /open, upstream: "\(upstream.url)", auth: none}

            """)
        defer { gateway.kill() }

        var generator = HTTP2FramingCaseGenerator(seed: Self.seed)
        let generated = (0..<Self.streams).map { generator.next(index: $0) }
        let folder = try TemporaryFolder("h2-framing")
        let specFile = folder.path("streams.json")
        try JSONEncoder().encode(generated).write(to: URL(fileURLWithPath: specFile))
        let result = try await ShortCommand.run(
            "/usr/bin/env", ["python3", "-c", Self.client, String(gateway.port), certificates.caFile, specFile, "8"]
        )
        try #require(result.status == 0, "the h2 client failed: \(result.stderr.suffix(2000))")
        let outcomes = try JSONDecoder().decode([HTTP2FramingOutcome].self, from: Data(result.stdout.utf8))
        try #require(outcomes.count == generated.count)

        let replay = "seed \(Self.seed), \(Self.streams) streams (H2_FRAMING_SEED, H2_FRAMING_STREAMS)"
        var forwarded: [String: HTTP2FramingCase] = [:]
        for (stream, outcome) in zip(generated, outcomes) {
            let context = "stream \(stream.id) (\(stream.method), \(stream.description))"
            if stream.refused {
                #expect(outcome.status != 200, "\(context): answered 200 though its length is false\n\(replay)")
                continue
            }
            #expect(outcome.status == 200, "\(context): \(outcome)\n\(replay)")
            // A HEAD answer has no body to tell whose it was.
            if stream.method != "HEAD" {
                #expect(outcome.body == stream.id, "\(context): an answer meant for another request: \(outcome.body.prefix(80))\n\(replay)")
            }
            forwarded[stream.id] = stream
        }

        var seen = Set<String>()
        for request in upstream.requests {
            let id = request.values("x-request-id").first ?? "?"
            guard let sent = forwarded[id], seen.insert(id).inserted else {
                Issue.record("the upstream saw a request no stream carried: \(request.method) \(request.target) id \(id)\n\(replay)")
                continue
            }
            #expect(request.method == sent.method && request.target == sent.target, "\(id): \(request.method) \(request.target)")
            #expect(request.body == Array(sent.body.utf8), "\(id): body of \(request.body.count) bytes for \(sent.body.utf8.count) sent (\(sent.description))\n\(replay)")
            let lengths = request.values("content-length")
            let codings = request.values("transfer-encoding")
            #expect(lengths.count + codings.count <= 1, "\(id): framing fields \(lengths) \(codings)")
            if let length = lengths.first { #expect(Int(length) == sent.body.utf8.count, "\(id): Content-Length \(length)") }
            if !sent.body.isEmpty { #expect(lengths.count + codings.count == 1, "\(id): a body went with no framing field") }
            #expect(request.values("x-gateway-user-id").isEmpty, "\(id): a forged identity reached the upstream")
        }
        #expect(seen.count == forwarded.count, "the upstream saw \(seen.count) of \(forwarded.count) forwarded streams\n\(replay)")
        let refused = generated.filter(\.refused).count
        // An upstream connection cut mid-body (a stream whose length was false) is the only
        // thing its parser may call broken.
        #expect(upstream.parseErrors.count <= refused, "the upstream could not parse what it was sent: \(upstream.parseErrors.prefix(3))")
        let withBody = forwarded.values.filter { !$0.body.isEmpty && ["GET", "HEAD", "DELETE", "OPTIONS", "TRACE"].contains($0.method) }.count
        print("HTTP/2 framing property: \(Self.streams) streams, \(forwarded.count) forwarded byte for byte (\(withBody) bodies on GET, HEAD, DELETE, OPTIONS or TRACE), \(refused) refused; \(replay)")
        #expect(withBody > Self.streams / 10, "too few bodies on bodiless-looking methods to prove anything: \(withBody)")
        #expect(refused > 0 || Self.streams < 200, "no stream with a false length was generated")
    }

    /// Opens `connections` TLS connections with ALPN h2 and sends their share of the streams one
    /// after the other: HEADERS, then the DATA in the same write or after a pause (a later read),
    /// then trailers or END_STREAM. Prints one outcome per stream, in order, as JSON.
    private static let client = #"""
        import json, socket, ssl, sys, threading, time
        import h2.config, h2.connection, h2.events

        port, ca, spec_file, connections = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
        spec = json.load(open(spec_file))
        outcomes = [None] * len(spec)

        def connect():
            context = ssl.create_default_context(cafile=ca)
            context.set_alpn_protocols(["h2"])
            sock = context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=15), server_hostname="127.0.0.1")
            conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, validate_outbound_headers=False))
            conn.initiate_connection()
            sock.sendall(conn.data_to_send())
            return sock, conn

        def run(worker):
            sock, conn = connect()
            for index in range(worker, len(spec), connections):
                step = spec[index]
                outcome = {"status": None, "body": "", "reset": None}
                outcomes[index] = outcome
                if conn.state_machine.state == h2.connection.ConnectionState.CLOSED:
                    sock.close()
                    sock, conn = connect()
                sid = conn.get_next_available_stream_id()
                body = step["body"].encode()
                ends_with_head = not body and not step["trailers"] and not step["emptyData"]
                conn.send_headers(sid, [tuple(f) for f in step["headers"]], end_stream=ends_with_head)
                if not ends_with_head:
                    if step["dataLater"]:
                        sock.sendall(conn.data_to_send())
                        time.sleep(0.002)
                    chunks = [body[i:i + step["frameSize"]] for i in range(0, len(body), step["frameSize"])] or [b""]
                    for number, chunk in enumerate(chunks):
                        last = number == len(chunks) - 1 and not step["trailers"]
                        conn.send_data(sid, chunk, end_stream=last)
                    if step["trailers"]:
                        conn.send_headers(sid, [("x-checksum", "abc")], end_stream=True)
                sock.sendall(conn.data_to_send())
                done = False
                while not done:
                    try:
                        data = sock.recv(65536)
                    except (socket.timeout, ConnectionError, ssl.SSLError):
                        break
                    if not data:
                        break
                    for event in conn.receive_data(data):
                        if getattr(event, "stream_id", None) != sid:
                            if isinstance(event, h2.events.ConnectionTerminated):
                                done = True
                            continue
                        if isinstance(event, h2.events.ResponseReceived):
                            outcome["status"] = int(dict(event.headers)[b":status"])
                        elif isinstance(event, h2.events.DataReceived):
                            outcome["body"] += event.data.decode(errors="replace")
                            conn.acknowledge_received_data(event.flow_controlled_length, sid)
                        elif isinstance(event, h2.events.StreamEnded):
                            done = True
                        elif isinstance(event, h2.events.StreamReset):
                            outcome["reset"] = int(event.error_code)
                            done = True
                    try:
                        sock.sendall(conn.data_to_send())
                    except (ConnectionError, ssl.SSLError):
                        break
                if not done:
                    sock.close()
                    sock, conn = connect()
            sock.close()

        threads = [threading.Thread(target=run, args=(worker,)) for worker in range(connections)]
        for thread in threads: thread.start()
        for thread in threads: thread.join()
        print(json.dumps(outcomes))
        """#
}

/// One generated stream, as the client script reads it.
struct HTTP2FramingCase: Codable, CustomStringConvertible {
    let id: String
    let method: String
    let target: String
    let headers: [[String]]
    /// What the DATA frames carry, in ASCII.
    let body: String
    let frameSize: Int
    /// The DATA goes in a write after the HEADERS' (a later read), not with them.
    let dataLater: Bool
    /// The stream ends with a trailers block instead of END_STREAM on the last DATA.
    let trailers: Bool
    /// A bodiless stream that still ends with an empty DATA frame rather than its HEADERS.
    let emptyData: Bool
    /// Its `content-length` disagrees with its DATA: swift-nio-http2 resets the stream.
    let refused: Bool

    var description: String {
        let length = headers.first { $0[0] == "content-length" }.map { "content-length \($0[1])" } ?? "no content-length"
        return "\(body.utf8.count) body bytes, \(length), DATA \(dataLater ? "in a later read" : "with the head")\(trailers ? ", trailers" : "")\(emptyData ? ", empty DATA" : "")"
    }
}

struct HTTP2FramingOutcome: Codable, CustomStringConvertible {
    let status: Int?
    let body: String
    let reset: Int?
    var description: String { "status \(status.map(String.init) ?? "none"), reset \(reset.map(String.init) ?? "none"), body \(body.prefix(200))" }
}

/// Generates ``HTTP2FramingCase``s from a seed (the same seed, the same streams).
struct HTTP2FramingCaseGenerator {
    private var random: SeededRandom

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    private mutating func below(_ bound: Int) -> Int { random.below(bound) }
    private mutating func chance(_ percent: Int) -> Bool { random.chance(percent) }
    private mutating func pick<T>(_ items: [T]) -> T { random.pick(items) }

    mutating func next(index: Int) -> HTTP2FramingCase {
        let id = "h2-\(index)"
        let method = pick(["GET", "GET", "HEAD", "DELETE", "OPTIONS", "TRACE", "POST", "PUT", "PATCH"])
        let target = "/open/s\(index)"
        var body = ""
        if chance(75) {
            // A whole request hidden in the body: it runs if the gateway writes the body unframed.
            if chance(85) {
                body += "GET /open/smuggled-\(index) HTTP/1.1\r\nHost: up\r\nX-Gateway-User-Id: usr_victim\r\nX-Request-Id: smuggled-\(index)\r\nContent-Length: 0\r\n\r\n"
            }
            body += String((0..<below(300)).map { _ in Character(Unicode.Scalar(UInt8(32 + below(95)))) })
        }
        var headers = [[":method", method], [":path", target], [":scheme", "https"], [":authority", "127.0.0.1"]]
        headers.append(["x-request-id", id])
        var refused = false
        if chance(40) {
            // A length that agrees with the body, or (rarely) one that does not.
            var length = body.utf8.count
            if !body.isEmpty, chance(8) {
                length = chance(50) ? below(body.utf8.count) : body.utf8.count + 1 + below(50)
                refused = true
            }
            headers.append(["content-length", String(length)])
        }
        if chance(30) { headers.append(["x-custom", id]) }
        // A stream that declares `content-length: 0` is answered before its END_STREAM and then
        // reset (NO_ERROR); trailers arriving after that reset are a connection error in
        // swift-nio-http2 (it takes them for a new stream), which ends every stream of the
        // connection. That is not framing, so such streams end with DATA instead.
        let declaresNone = headers.contains { $0[0] == "content-length" && $0[1] == "0" }
        return HTTP2FramingCase(
            id: id, method: method, target: target, headers: headers, body: body, frameSize: 1 + below(200),
            dataLater: chance(40), trailers: !declaresNone && chance(15), emptyData: body.isEmpty && chance(50), refused: refused
        )
    }
}
