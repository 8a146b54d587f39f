import Foundation
import Testing
import TestSupport

/// Many idle WebSockets through one gateway: what each costs in resident memory, that every
/// one still echoes after sitting idle with the others, and that SIGTERM sends each `1001`.
/// The upstream and the clients are single asyncio processes (one socket each, no threads).
@Suite("Proxy: 2,000 idle WebSockets", .serialized, .timingSensitive)
struct WebSocketScaleTests {
    static let connections = 2000

    /// An asyncio echo upstream: handshake, then every frame echoed unmasked.
    static let upstream = WebSocketScripts.frames + """
        import asyncio
        async def read_frame_async(reader):
            head = await reader.readexactly(2)
            opcode, length = head[0] & 0x0F, head[1] & 0x7F
            if length == 126:
                length = struct.unpack("!H", await reader.readexactly(2))[0]
            elif length == 127:
                length = struct.unpack("!Q", await reader.readexactly(8))[0]
            key = await reader.readexactly(4) if head[1] & 0x80 else b""
            payload = await reader.readexactly(length)
            if key:
                payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
            return opcode, payload
        async def serve(reader, writer):
            try:
                head = await reader.readuntil(b"\\r\\n\\r\\n")
                key = [l.split(b":", 1)[1].strip().decode() for l in head.split(b"\\r\\n") if l.lower().startswith(b"sec-websocket-key:")][0]
                writer.write(("HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Accept: %s\\r\\n\\r\\n" % accept_for(key)).encode())
                while True:
                    opcode, payload = await read_frame_async(reader)
                    writer.write(frame(opcode, payload, False))
                    if opcode == 8:
                        break
            except Exception:
                pass
            writer.close()
        async def main():
            server = await asyncio.start_server(serve, "127.0.0.1", int(sys.argv[1]), backlog=4096)
            async with server:
                await server.serve_forever()
        asyncio.run(main())
        """

    /// argv: port, token, count, go-file. Opens `count` sockets, prints `ready`; once the
    /// go-file exists, echoes a message on each and prints `echoed`; then prints the close
    /// codes the gateway sends.
    static let clients = WebSocketScripts.frames + """
        import asyncio
        port, token, count, go = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
        async def read_frame_async(reader):
            head = await reader.readexactly(2)
            length = head[1] & 0x7F
            if length == 126:
                length = struct.unpack("!H", await reader.readexactly(2))[0]
            return head[0] & 0x0F, await reader.readexactly(length)
        async def open_one(limit):
            async with limit:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                key = base64.b64encode(os.urandom(16)).decode()
                writer.write(("GET /live/idle HTTP/1.1\\r\\nHost: gw\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n"
                              "Sec-WebSocket-Key: %s\\r\\nSec-WebSocket-Version: 13\\r\\nAuthorization: Bearer %s\\r\\n\\r\\n" % (key, token)).encode())
                head = await reader.readuntil(b"\\r\\n\\r\\n")
                return (reader, writer) if head.startswith(b"HTTP/1.1 101") else None
        async def echo(pair, index):
            reader, writer = pair
            message = ("socket %d" % index).encode()
            writer.write(frame(1, message, True))
            opcode, payload = await read_frame_async(reader)
            return payload == message
        async def close_code(pair):
            reader, writer = pair
            try:
                opcode, payload = await asyncio.wait_for(read_frame_async(reader), 30)
                return struct.unpack("!H", payload[:2])[0] if opcode == 8 and len(payload) >= 2 else -opcode
            except Exception as error:
                return str(type(error).__name__)
        async def main():
            limit = asyncio.Semaphore(100)
            pairs = [p for p in await asyncio.gather(*[open_one(limit) for _ in range(count)], return_exceptions=True) if isinstance(p, tuple)]
            print(json.dumps({"ready": len(pairs)}), flush=True)
            while not os.path.exists(go):
                await asyncio.sleep(0.02)
            echoed = await asyncio.gather(*[echo(p, i) for i, p in enumerate(pairs)], return_exceptions=True)
            print(json.dumps({"echoed": sum(1 for e in echoed if e is True)}), flush=True)
            codes = await asyncio.gather(*[close_code(p) for p in pairs])
            tally = {}
            for code in codes:
                tally[str(code)] = tally.get(str(code), 0) + 1
            print(json.dumps({"closes": tally}), flush=True)
        asyncio.run(main())
        """

    @Test func twoThousandIdleSocketsCostLittleStillEchoAndAllGet1001OnSIGTERM() async throws {
        let redis = try await RedisServer()
        defer { withExtendedLifetime(redis) {} }
        let upstreamPort = LoopbackPort.free()
        let upstream = try ChildProcess("/usr/bin/python3", ["-c", Self.upstream, String(upstreamPort)])
        defer { upstream.kill9() }
        try await eventually(timeout: .seconds(10)) { LoopbackPort.isAccepting(upstreamPort) }
        let yaml = DriverYAML.make(redis: redis, extra: "server: {max_websockets_per_user: \(Self.connections)}") + """
            routes:
              - {name: live, path_prefix: /live, upstream: http://127.0.0.1:\(upstreamPort), auth: bearer, websocket: true}

            """
        let gateway = try await GatewayProcess(yaml: yaml)
        let login = try await DriverAPI.login(gateway, phone: "9876500301")
        // Warm: one connection through first, so pools and tables exist before the baseline.
        #expect(try await WebSocketProxyTests.client(gateway, path: "/live/warm", headers: ["Authorization: Bearer \(login.accessToken)"])["status"] as? Int == 101)
        let baseline = try ProcessMemory.residentBytes(pid: gateway.process.pid)

        let folder = try TemporaryFolder("pg-ws-scale")
        defer { withExtendedLifetime(folder) {} }
        let logPath = folder.path("clients.log")
        let go = folder.path("go")
        let clients = try ChildProcess(
            "/usr/bin/python3", ["-c", Self.clients, String(gateway.port), login.accessToken, String(Self.connections), go], outputPath: logPath
        )
        defer { clients.kill9() }
        func line(_ key: String) -> [String: Any]? {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .first { $0[key] != nil }
        }
        try await eventually(timeout: .seconds(120), interval: .milliseconds(100)) { line("ready") != nil }
        let ready = try #require(line("ready")?["ready"] as? Int)
        #expect(ready == Self.connections, "only \(ready) sockets upgraded")
        let loaded = try ProcessMemory.residentBytes(pid: gateway.process.pid)
        let perConnection = (loaded - baseline) / max(ready, 1)
        print("WebSocketScaleTests: \(ready) idle WebSockets; gateway RSS \(baseline >> 20) MiB before, \(loaded >> 20) MiB with them: \(perConnection) bytes per connection (client and upstream side)")
        #expect(perConnection < 64 * 1024, "\(perConnection) bytes per idle WebSocket")

        FileManager.default.createFile(atPath: go, contents: nil)
        try await eventually(timeout: .seconds(60), interval: .milliseconds(100)) { line("echoed") != nil }
        #expect(line("echoed")?["echoed"] as? Int == ready, "\(line("echoed") ?? [:])")

        gateway.process.signal(SIGTERM)
        try await eventually(timeout: .seconds(60), interval: .milliseconds(100)) { line("closes") != nil }
        let closes = try #require(line("closes")?["closes"] as? [String: Int])
        #expect(closes == ["1001": ready], "\(closes)")
        #expect(try await gateway.process.waitForExit() == 0)
    }
}
