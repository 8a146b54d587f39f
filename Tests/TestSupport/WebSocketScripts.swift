import Foundation

/// WebSocket ends written in a few lines of standard-library Python (RFC 6455 framing by
/// hand, so no package is needed): an echo upstream (``upstream()``) and a client
/// (``client``), each printing what it saw as JSON lines.
public enum WebSocketScripts {
    /// Reading and writing frames; `mask` for a client's frames.
    public static let frames = """
        import base64, hashlib, json, os, socket, struct, sys, time
        def read_exact(sock, buffer, count):
            while len(buffer) < count:
                chunk = sock.recv(65536)
                if not chunk:
                    return None, buffer
                buffer += chunk
            return buffer[:count], buffer[count:]
        def read_frame(sock, buffer):
            head, buffer = read_exact(sock, buffer, 2)
            if head is None:
                return None, buffer
            opcode = head[0] & 0x0F
            masked = head[1] & 0x80 != 0
            length = head[1] & 0x7F
            if length == 126:
                raw, buffer = read_exact(sock, buffer, 2)
                length = struct.unpack("!H", raw)[0]
            elif length == 127:
                raw, buffer = read_exact(sock, buffer, 8)
                length = struct.unpack("!Q", raw)[0]
            key = b""
            if masked:
                key, buffer = read_exact(sock, buffer, 4)
            payload, buffer = read_exact(sock, buffer, length)
            if payload is None:
                return None, buffer
            if masked:
                payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
            return (opcode, payload, masked), buffer
        def frame(opcode, payload, mask):
            head = bytes([0x80 | opcode])
            bit = 0x80 if mask else 0
            if len(payload) < 126:
                head += bytes([bit | len(payload)])
            elif len(payload) < 65536:
                head += bytes([bit | 126]) + struct.pack("!H", len(payload))
            else:
                head += bytes([bit | 127]) + struct.pack("!Q", len(payload))
            if not mask:
                return head + payload
            key = os.urandom(4)
            return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))
        def read_head(sock):
            data = b""
            while b"\\r\\n\\r\\n" not in data:
                chunk = sock.recv(65536)
                if not chunk:
                    return None, {}, data
                data += chunk
            head, rest = data.split(b"\\r\\n\\r\\n", 1)
            lines = head.decode("latin-1").split("\\r\\n")
            fields = {}
            for line in lines[1:]:
                name, value = line.split(":", 1)
                fields.setdefault(name.strip().lower(), []).append(value.strip())
            return lines[0], fields, rest
        def accept_for(key):
            return base64.b64encode(hashlib.sha1(key.encode() + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest()).decode()

        """

    /// An echo upstream: prints each handshake's request line and fields, answers `101`
    /// (with `subprotocol` when the client offered it), and echoes every data frame.
    /// `holdUntil`: the `101` waits until that file exists; `delay`: then that many seconds more.
    public static func upstream(holdUntil: String? = nil, delay: Double = 0) async throws -> ScriptedUpstream {
        try await ScriptedUpstream(serving: frames + """
            HOLD, DELAY = \(holdUntil.map { "\"\($0)\"" } ?? "None"), \(delay)
            def serve(connection):
                line, fields, buffer = read_head(connection)
                if line is None:
                    return
                print(json.dumps({"request": line, "fields": fields}), flush=True)
                while HOLD is not None and not os.path.exists(HOLD):
                    time.sleep(0.01)
                if DELAY:
                    time.sleep(DELAY)
                if "websocket" not in ",".join(fields.get("upgrade", [])).lower():
                    connection.sendall(b"HTTP/1.1 426 Upgrade Required\\r\\ncontent-length: 0\\r\\n\\r\\n")
                    return
                answer = "HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n"
                answer += "Sec-WebSocket-Accept: %s\\r\\n" % accept_for(fields["sec-websocket-key"][0])
                offered = [p.strip() for v in fields.get("sec-websocket-protocol", []) for p in v.split(",")]
                if offered:
                    answer += "Sec-WebSocket-Protocol: %s\\r\\n" % offered[0]
                connection.sendall((answer + "\\r\\n").encode())
                while True:
                    got, buffer = read_frame(connection, buffer)
                    if got is None:
                        return
                    opcode, payload, masked = got
                    if not masked:
                        print(json.dumps({"unmasked": opcode}), flush=True)
                    if opcode == 8:
                        code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                        print(json.dumps({"close": code}), flush=True)
                        connection.sendall(frame(8, payload, False))
                        return
                    connection.sendall(frame(opcode, payload, False))
            """)
    }

    /// A client: argv port, path, a JSON list of extra header lines, then what to do
    /// (`echo`: a text and a 70,000-byte binary message and a ping, then a close;
    /// `wait`: nothing, until the gateway closes), and optionally a CA file (then over TLS).
    /// Prints one JSON object.
    public static let client = frames + """
        port, path, extra, mode = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
        sock = socket.create_connection(("127.0.0.1", port))
        if len(sys.argv) > 5:
            import ssl
            context = ssl.create_default_context(cafile=sys.argv[5])
            context.set_alpn_protocols(["http/1.1"])
            sock = context.wrap_socket(sock, server_hostname="127.0.0.1")
        key = base64.b64encode(os.urandom(16)).decode()
        lines = ["GET %s HTTP/1.1" % path, "Host: gateway.test", "Upgrade: websocket", "Connection: Upgrade",
                 "Sec-WebSocket-Key: " + key, "Sec-WebSocket-Version: 13"] + extra
        sock.sendall(("\\r\\n".join(lines) + "\\r\\n\\r\\n").encode())
        line, fields, buffer = read_head(sock)
        result = {"status": int(line.split()[1]) if line else None, "fields": fields}
        if result["status"] != 101:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                buffer += chunk
            result["body"] = buffer.decode("utf-8", "replace")
            print(json.dumps(result))
            sys.exit(0)
        result["accept_ok"] = fields.get("sec-websocket-accept") == [accept_for(key)]
        if mode == "echo":
            big = os.urandom(70000)
            sock.sendall(frame(1, b"hello through the gateway", True))
            got, buffer = read_frame(sock, buffer)
            result["text"] = got[1].decode() if got else None
            result["text_masked"] = got[2] if got else None
            sock.sendall(frame(2, big, True))
            got, buffer = read_frame(sock, buffer)
            result["binary_ok"] = got is not None and got[1] == big
            sock.sendall(frame(9, b"are you there", True))
            got, buffer = read_frame(sock, buffer)
            result["ping_echo"] = [got[0], got[1].decode()] if got else None
            sock.sendall(frame(8, struct.pack("!H", 1000), True))
        else:
            print(json.dumps({"ready": True}), flush=True)
        started = time.monotonic()
        got, buffer = read_frame(sock, buffer)
        result["close"] = struct.unpack("!H", got[1][:2])[0] if got and got[0] == 8 and len(got[1]) >= 2 else None
        result["closed_after"] = time.monotonic() - started
        result["closed_at"] = time.time()
        print(json.dumps(result), flush=True)
        """
}

extension WebSocketScripts {
    /// `count` handshakes from one process, the first at `start` (Unix time), one every
    /// `interval` seconds, each on its own connection; a socket that opens waits for the
    /// gateway's close until `until`. Argv: port, path, a JSON list of extra header lines,
    /// start, interval, count, until. Prints a JSON list: per handshake its status, when it
    /// opened and when (and with which code) it was closed.
    public static let burst = frames + """
        import threading
        port, path, extra = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
        start, interval, count, until = float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7])
        results = [None] * count
        def handshake(index):
            time.sleep(max(0, start + index * interval - time.time()))
            result = {"fired_at": time.time(), "status": None, "opened_at": None, "closed_at": None, "close": None}
            results[index] = result
            sock = socket.create_connection(("127.0.0.1", port))
            key = base64.b64encode(os.urandom(16)).decode()
            lines = ["GET %s HTTP/1.1" % path, "Host: gateway.test", "Upgrade: websocket", "Connection: Upgrade",
                     "Sec-WebSocket-Key: " + key, "Sec-WebSocket-Version: 13"] + extra
            sock.sendall(("\\r\\n".join(lines) + "\\r\\n\\r\\n").encode())
            line, fields, buffer = read_head(sock)
            result["status"] = int(line.split()[1]) if line else None
            if result["status"] != 101:
                sock.close()
                return
            result["opened_at"] = time.time()
            sock.settimeout(max(0.1, until - time.time()))
            try:
                got, buffer = read_frame(sock, buffer)
            except socket.timeout:
                got = "open"
            if got != "open":
                result["closed_at"] = time.time()
                result["close"] = struct.unpack("!H", got[1][:2])[0] if got and got[0] == 8 and len(got[1]) >= 2 else None
            sock.close()
        threads = [threading.Thread(target=handshake, args=(i,)) for i in range(count)]
        for thread in threads: thread.start()
        for thread in threads: thread.join()
        print(json.dumps(results))
        """
}

/// A ``WebSocketScripts/client`` in `wait` mode, running on: connected once ``start`` returns,
/// then ``result()`` when the gateway closes it.
public struct WebSocketClientProcess: Sendable {
    public let process: ChildProcess
    public let logPath: String
    public let folder: TemporaryFolder

    /// `awaitingOpen`: return once the handshake is answered; false: at once, while an
    /// upstream that holds its `101` keeps it waiting.
    public static func start(_ gateway: GatewayProcess, path: String, headers: [String], awaitingOpen: Bool = true) async throws -> WebSocketClientProcess {
        let folder = try TemporaryFolder("pg-ws-client")
        let logPath = folder.path("client.log")
        let extra = String(decoding: try JSONSerialization.data(withJSONObject: headers), as: UTF8.self)
        let process = try ChildProcess(
            "/usr/bin/python3", ["-c", WebSocketScripts.client, String(gateway.port), path, extra, "wait"], outputPath: logPath
        )
        let client = WebSocketClientProcess(process: process, logPath: logPath, folder: folder)
        guard awaitingOpen else { return client }
        do {
            try await eventually(timeout: .seconds(10)) { client.lines.contains { $0["ready"] != nil || $0["status"] != nil } }
        } catch {
            process.kill9()
            throw error
        }
        return client
    }

    private var lines: [[String: Any]] {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// What the client printed when its connection ended, if it has.
    public var ended: [String: Any]? { lines.first { $0["status"] != nil } }

    /// Waits for the end.
    public func result(timeout: Duration = .seconds(5)) async throws -> [String: Any] {
        try await eventually(timeout: timeout) { ended != nil }
        return ended!
    }

    public func stop() {
        process.kill9()
    }
}
