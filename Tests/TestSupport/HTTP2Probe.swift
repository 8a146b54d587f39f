import Foundation

/// An HTTP/2 client that sends what curl will not: heads without pseudo-fields, invalid
/// fields, a stream reset mid-body. It is Python's `h2` package (`scripts/install-deps.sh`)
/// over TLS with ALPN `h2`, one connection per ``exchange(_:)``, the streams one after the
/// other on it, so a test also sees whether the connection survived each case.
public struct HTTP2Probe: Sendable {
    public struct Stream: Encodable, Sendable {
        /// Sent as given: pseudo-fields first, any case, any value.
        public var headers: [[String]]
        public var body: String?
        /// Reset the stream (`CANCEL`) after the body instead of ending it.
        public var reset = false
        /// Leave the request open after a head without body: no END_STREAM, nothing more.
        public var open = false
        /// Sent after the body as a trailer block that ends the stream, as given.
        public var trailers: [[String]]?

        public init(headers: [[String]], body: String? = nil, reset: Bool = false, open: Bool = false, trailers: [[String]]? = nil) {
            self.headers = headers
            self.body = body
            self.reset = reset
            self.open = open
            self.trailers = trailers
        }

        /// A request with the usual pseudo-fields and `extra` fields after them.
        public static func request(
            _ method: String, _ path: String, _ extra: [[String]] = [], body: String? = nil, reset: Bool = false, trailers: [[String]]? = nil
        ) -> Stream {
            Stream(
                headers: [[":method", method], [":path", path], [":scheme", "https"], [":authority", "127.0.0.1"]] + extra,
                body: body, reset: reset, trailers: trailers
            )
        }
    }

    public struct StreamOutcome: Decodable, Sendable, CustomStringConvertible {
        public let status: Int?
        public let body: String
        /// The RST_STREAM error code the gateway sent, if it reset the stream.
        public let reset: Int?
        public var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
        }
        /// The error shape's `code`.
        public var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
        public var description: String { "status \(status.map(String.init) ?? "none") reset \(reset.map(String.init) ?? "none") \(body.prefix(300))" }
    }

    public struct Outcome: Decodable, Sendable, CustomStringConvertible {
        /// One per stream sent, in order; streams not sent (after a GOAWAY) are missing.
        public let streams: [StreamOutcome]
        /// The GOAWAY error code, if the gateway ended the connection.
        public let goaway: Int?
        public var description: String { "goaway \(goaway.map(String.init) ?? "none"): \(streams)" }
    }

    /// RFC 9113 error codes.
    public static let protocolError = 1
    public static let compressionError = 9
    public static let enhanceYourCalm = 11

    public let port: Int
    public let caFile: String

    public init(port: Int, caFile: String) {
        self.port = port
        self.caFile = caFile
    }

    public func exchange(_ streams: [Stream]) async throws -> Outcome {
        let spec = String(decoding: try JSONEncoder().encode(streams), as: UTF8.self)
        let result = try await ShortCommand.run("/usr/bin/env", ["python3", "-c", Self.script, String(port), caFile, spec])
        guard result.status == 0 else { throw Failed(output: result.stderr + result.stdout) }
        return try JSONDecoder().decode(Outcome.self, from: Data(result.stdout.utf8))
    }

    public struct Failed: Error, CustomStringConvertible {
        public let output: String
        public var description: String { "the h2 probe failed: \(output)" }

        public init(output: String) {
            self.output = output
        }
    }

    private static let script = #"""
        import json, socket, ssl, sys
        import h2.config, h2.connection, h2.events

        port, ca, spec = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
        context = ssl.create_default_context(cafile=ca)
        context.set_alpn_protocols(["h2"])
        sock = context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname="127.0.0.1")
        assert sock.selected_alpn_protocol() == "h2", sock.selected_alpn_protocol()
        config = h2.config.H2Configuration(client_side=True, validate_outbound_headers=False,
                                           normalize_outbound_headers=False, validate_inbound_headers=False)
        conn = h2.connection.H2Connection(config=config)
        conn.initiate_connection()
        sock.sendall(conn.data_to_send())
        streams, goaway = {}, None

        def pump(finished):
            global goaway
            while not finished() and goaway is None:
                try:
                    data = sock.recv(65536)
                except (socket.timeout, ConnectionError, ssl.SSLError):
                    return
                if not data:
                    return
                for event in conn.receive_data(data):
                    stream = streams.get(getattr(event, "stream_id", None))
                    if isinstance(event, h2.events.ConnectionTerminated):
                        goaway = int(event.error_code)
                    elif stream is None:
                        continue
                    elif isinstance(event, h2.events.ResponseReceived):
                        stream["status"] = int(dict(event.headers)[b":status"])
                    elif isinstance(event, h2.events.DataReceived):
                        stream["body"] += event.data.decode(errors="replace")
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        stream["ended"] = True
                    elif isinstance(event, h2.events.StreamReset):
                        stream["reset"] = int(event.error_code)
                sock.sendall(conn.data_to_send())

        sent = []
        for step in spec:
            if goaway is not None:
                break
            sid = conn.get_next_available_stream_id()
            stream = streams[sid] = {"status": None, "body": "", "reset": None, "ended": False}
            sent.append(stream)
            body, trailers = (step.get("body") or "").encode(), step.get("trailers")
            conn.send_headers(sid, [tuple(field) for field in step["headers"]], end_stream=not body and not step["open"] and not trailers)
            if body:
                conn.send_data(sid, body, end_stream=not step["reset"] and not trailers)
            if trailers:
                conn.send_headers(sid, [tuple(field) for field in trailers], end_stream=True)
            if step["reset"]:
                conn.reset_stream(sid, error_code=8)
                sock.sendall(conn.data_to_send())
                continue
            sock.sendall(conn.data_to_send())
            pump(lambda: stream["ended"] or stream["reset"] is not None)
        print(json.dumps({"streams": [{k: s[k] for k in ("status", "body", "reset")} for s in sent], "goaway": goaway}))
        """#
}
