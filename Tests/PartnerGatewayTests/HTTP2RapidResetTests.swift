import Foundation
import Testing
import TestSupport

/// Rapid reset (HEADERS then RST_STREAM, over and over) against a proxied route: NIOHTTP2
/// ends such a connection with GOAWAY after its reset limit, and until then a reset stream
/// must cost the upstream nothing, neither a request nor a connection of its own.
@Suite("TLS: HTTP/2 rapid reset costs the upstream no connections", .serialized, .realProcesses)
struct HTTP2RapidResetTests {
    /// Counts the connections it accepts (an `accepted` line each) and answers every request.
    static let countingUpstream = """
        def serve(connection):
            print("accepted", flush=True)
            for _ in request_heads(connection):
                connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nok")
            connection.close()
        """

    @Test func resetStreamsOpenNoUpstreamConnections() async throws {
        let stack = try await ScriptedTLSGateway(serving: Self.countingUpstream)
        defer { stack.upstream.stop() }
        let (certificates, upstream, gateway) = (stack.certificates, stack.upstream, stack.gateway)
        let attackers = 3
        let result = try await ShortCommand.run(
            "/usr/bin/env", ["python3", "-c", Self.attacker, String(gateway.port), certificates.caFile, String(attackers), "1000"]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let attack = try #require(try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]], "\(result.stdout) \(result.stderr)")
        let resets = attack.map { $0["resets"] as? Int ?? 0 }
        // NIOHTTP2 allows 200 resets in 30 s before GOAWAY.
        #expect(attack.allSatisfy { $0["goaway"] is Int }, "\(attack)")
        #expect(resets.allSatisfy { $0 >= 100 }, "\(resets)")

        // A client after the attack is served, on an upstream connection of its own at most.
        let probe = stack.probe
        let after = try await probe.exchange([.request("GET", "/open/after")])
        #expect(after.streams.first?.status == 200, "\(after)")
        let accepted = upstream.log.components(separatedBy: "accepted").count - 1
        print("HTTP2RapidResetTests: \(attackers) attackers sent \(resets) HEADERS + RST_STREAM pairs before reading the GOAWAY; the upstream accepted \(accepted) connections (the client after them included)")
        #expect(accepted <= 1 + 2 * attackers, "the upstream accepted \(accepted) connections for \(resets) pairs")
        #expect(gateway.process.isRunning)
    }

    /// `count` connections one after the other, each sending up to `pairs` HEADERS + RST_STREAM
    /// pairs, each pair in one write, until the gateway's GOAWAY; prints per connection how
    /// many pairs it sent before reading the GOAWAY, and the GOAWAY's code.
    static let attacker = #"""
        import json, select, socket, ssl, sys
        import h2.config, h2.connection, h2.events, h2.exceptions

        port, ca, count, pairs = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        context = ssl.create_default_context(cafile=ca)
        context.set_alpn_protocols(["h2"])
        config = h2.config.H2Configuration(client_side=True)
        headers = [(":method", "GET"), (":path", "/open/reset"), (":scheme", "https"), (":authority", "127.0.0.1")]
        report = []
        for n in range(count):
            sock = context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname="127.0.0.1")
            conn = h2.connection.H2Connection(config=config)
            conn.initiate_connection()
            sock.sendall(conn.data_to_send())
            resets, goaway = 0, None

            def receive(block):
                global goaway
                while goaway is None and (block or sock.pending() or select.select([sock], [], [], 0)[0]):
                    data = sock.recv(65536)
                    if not data:
                        goaway = goaway if goaway is not None else -1
                        return
                    for event in conn.receive_data(data):
                        if isinstance(event, h2.events.ConnectionTerminated):
                            goaway = int(event.error_code)
                    sock.sendall(conn.data_to_send())
                    block = False

            try:
                for _ in range(pairs):
                    receive(False)
                    if goaway is not None:
                        break
                    sid = conn.get_next_available_stream_id()
                    conn.send_headers(sid, headers, end_stream=True)
                    conn.reset_stream(sid, error_code=8)
                    sock.sendall(conn.data_to_send())
                    resets += 1
                while goaway is None:
                    receive(True)
            except (ConnectionError, ssl.SSLError, socket.timeout, h2.exceptions.ProtocolError):
                pass
            sock.close()
            report.append({"resets": resets, "goaway": goaway})
        print(json.dumps(report))
        """#
}
