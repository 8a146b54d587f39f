import Foundation
import Testing
import TestSupport

/// WebSockets through the gateway, real processes on loopback: a Redis, the gateway, an echo
/// upstream and clients of ``WebSocketScripts``.
@Suite("Proxy: WebSockets", .serialized, .realProcesses)
struct WebSocketProxyTests {
    private static func start(extra: String = "") async throws -> (RedisServer, ScriptedUpstream, GatewayProcess) {
        let redis = try await RedisServer()
        let upstream = try await WebSocketScripts.upstream()
        let yaml = DriverYAML.make(redis: redis, extra: extra) + """
            routes:
              - {name: live, path_prefix: /live, upstream: \(upstream.url), auth: bearer, websocket: true}
              - {name: plain, path_prefix: /plain, upstream: \(upstream.url), auth: none}
              - {name: quiet, path_prefix: /quiet, upstream: \(upstream.url), auth: none, websocket: true, stream_idle_timeout: 1s}

            """
        let gateway = try await GatewayProcess(yaml: yaml)
        return (redis, upstream, gateway)
    }

    /// Runs the client; its one JSON object.
    static func client(_ gateway: GatewayProcess, path: String, headers: [String], mode: String = "echo", caFile: String? = nil) async throws -> [String: Any] {
        let extra = String(decoding: try JSONSerialization.data(withJSONObject: headers), as: UTF8.self)
        let output = try await DriverPython.run(WebSocketScripts.client, [String(gateway.port), path, extra, mode] + (caFile.map { [$0] } ?? []))
        return try DriverPython.jsonObject(output)
    }

    /// The handshakes the upstream received, as it printed them.
    static func handshakes(_ upstream: ScriptedUpstream) -> [[String: Any]] {
        upstream.log.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]).flatMap { $0["request"] == nil ? nil : $0 }
        }
    }

    @Test func framesEchoBothWaysThroughABearerRouteAndTheUpstreamSawTheCaller() async throws {
        let (redis, upstream, gateway) = try await Self.start()
        defer { withExtendedLifetime(redis) {} }
        defer { upstream.stop() }
        let login = try await DriverAPI.login(gateway, phone: "9876500101")

        let result = try await Self.client(gateway, path: "/live/rides?x=1", headers: ["Authorization: Bearer \(login.accessToken)"])
        #expect(result["status"] as? Int == 101, "\(result)")
        #expect(result["accept_ok"] as? Bool == true, "\(result)")
        #expect(result["text"] as? String == "hello through the gateway", "\(result)")
        #expect(result["text_masked"] as? Bool == false, "server frames reach the client unmasked")
        #expect(result["binary_ok"] as? Bool == true, "\(result)")
        #expect((result["ping_echo"] as? [Any])?.first as? Int == 9, "\(result)")
        #expect(result["close"] as? Int == 1000, "\(result)")

        let seen = Self.handshakes(upstream)
        try #require(seen.count == 1, "\(upstream.log)")
        #expect(seen[0]["request"] as? String == "GET /live/rides?x=1 HTTP/1.1")
        let fields = try #require(seen[0]["fields"] as? [String: [String]])
        #expect(fields["x-gateway-user-id"] == [login.userID], "\(fields)")
        #expect(fields["upgrade"] == ["websocket"], "\(fields)")
        #expect(fields["connection"] == ["Upgrade"], "\(fields)")
        #expect(fields["sec-websocket-key"]?.count == 1)
        #expect(fields["authorization"] == nil, "the bearer token reached the upstream")
        #expect(!upstream.log.contains("unmasked"), "the gateway sent the upstream unmasked frames: \(upstream.log)")
        #expect(upstream.log.contains("\"close\": 1000"), "\(upstream.log)")

        let assertion = try #require(fields["x-gateway-assertion"]?.first, "\(fields)")
        let jwks = try await DriverHTTP.call(gateway.baseURL + "/.well-known/jwks.json")
        let verified = try DriverPython.jsonObject(try await DriverPython.run(
            """
            import json, sys, jwt
            token, jwks = sys.argv[1:3]
            header = jwt.get_unverified_header(token)
            jwk = next(k for k in json.loads(jwks)["keys"] if k["kid"] == header["kid"])
            print(json.dumps(jwt.decode(token, jwt.PyJWK(jwk).key, algorithms=["ES256"], audience="live")))
            """,
            [assertion, jwks.text]
        ))
        #expect(verified["sub"] as? String == login.userID, "\(verified)")
    }

    /// A browser's way: the token as a subprotocol beside the real one, never in the URL.
    @Test func aBrowserAuthenticatesWithTheTokenSubprotocolAndNoTokenReachesTheURLOrTheLog() async throws {
        let (redis, upstream, gateway) = try await Self.start()
        defer { withExtendedLifetime(redis) {} }
        defer { upstream.stop() }
        let login = try await DriverAPI.login(gateway, phone: "9876500102")
        let encoded = Data(login.accessToken.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let result = try await Self.client(
            gateway, path: "/live/rides", headers: ["Sec-WebSocket-Protocol: rides.v1, base64url.bearer.authorization.gateway.\(encoded)"]
        )
        #expect(result["status"] as? Int == 101, "\(result)")
        #expect(result["text"] as? String == "hello through the gateway", "\(result)")
        let answered = try #require(result["fields"] as? [String: [String]])
        #expect(answered["sec-websocket-protocol"] == ["rides.v1"], "the gateway did not answer with the real subprotocol: \(answered)")

        let seen = Self.handshakes(upstream)
        try #require(seen.count == 1, "\(upstream.log)")
        let fields = try #require(seen[0]["fields"] as? [String: [String]])
        #expect(fields["sec-websocket-protocol"] == ["rides.v1"], "the token subprotocol reached the upstream: \(fields)")
        #expect(fields["x-gateway-user-id"] == [login.userID], "\(fields)")
        #expect(fields["authorization"] == nil)
        #expect(!upstream.log.contains(encoded) && !upstream.log.contains(login.accessToken))
        // The access line is written (the handshake's, status 101), and holds neither form of the token.
        try await eventually { gateway.log.contains("\"status\":101") }
        #expect(!gateway.log.contains(encoded) && !gateway.log.contains(login.accessToken), "the token reached the gateway's log")

        // Alone (no real subprotocol), doubled with Authorization, or undecodable: refused.
        for (headers, status) in [
            (["Sec-WebSocket-Protocol: base64url.bearer.authorization.gateway.\(encoded)"], 400),
            (["Sec-WebSocket-Protocol: rides.v1, base64url.bearer.authorization.gateway.\(encoded)", "Authorization: Bearer \(login.accessToken)"], 400),
            (["Sec-WebSocket-Protocol: rides.v1, base64url.bearer.authorization.gateway.%%%"], 401),
        ] {
            let refused = try await Self.client(gateway, path: "/live/rides", headers: headers)
            #expect(refused["status"] as? Int == status, "\(headers): \(refused)")
        }
        #expect(Self.handshakes(upstream).count == 1, "a refused handshake reached the upstream")
    }

    @Test func sigtermSendsGoingAwayToEveryUpgradedConnection() async throws {
        let (redis, upstream, gateway) = try await Self.start()
        defer { withExtendedLifetime(redis) {} }
        defer { upstream.stop() }
        let login = try await DriverAPI.login(gateway, phone: "9876500103")
        var sockets: [WebSocketClientProcess] = []
        defer { sockets.forEach { $0.stop() } }
        for _ in 0..<3 {
            sockets.append(try await WebSocketClientProcess.start(gateway, path: "/live/rides", headers: ["Authorization: Bearer \(login.accessToken)"]))
        }
        gateway.process.signal(SIGTERM)
        for socket in sockets {
            let result = try await socket.result(timeout: .seconds(10))
            #expect(result["close"] as? Int == 1001, "\(result)")
        }
        #expect(try await gateway.process.waitForExit() == 0, "\(gateway.log.suffix(2000))")
    }

    @Test func aUserOverTheCapIsRefused429AndTheMetricsCountOpenAndRefusedConnections() async throws {
        let (redis, upstream, gateway) = try await Self.start(extra: "server: {max_websockets_per_user: 2}")
        defer { withExtendedLifetime(redis) {} }
        defer { upstream.stop() }
        let login = try await DriverAPI.login(gateway, phone: "9876500104")
        let other = try await DriverAPI.login(gateway, phone: "9876500105")
        let headers = ["Authorization: Bearer \(login.accessToken)"]
        let first = try await WebSocketClientProcess.start(gateway, path: "/live/rides", headers: headers)
        defer { first.stop() }
        let second = try await WebSocketClientProcess.start(gateway, path: "/live/rides", headers: headers)
        defer { second.stop() }
        let refused = try await Self.client(gateway, path: "/live/rides", headers: headers)
        #expect(refused["status"] as? Int == 429, "\(refused)")
        let body = try DriverPython.jsonObject(refused["body"] as? String ?? "")
        #expect((body["error"] as? [String: Any])?["code"] as? String == "TOO_MANY_CONNECTIONS", "\(body)")
        // Another user is not held back.
        let others = try await Self.client(gateway, path: "/live/rides", headers: ["Authorization: Bearer \(other.accessToken)"])
        #expect(others["status"] as? Int == 101, "\(others)")

        func metrics() async throws -> String { try await DriverHTTP.call(gateway.adminURL + "/metrics", headers: [("Authorization", "Bearer \(GatewayProcess.adminToken)")]).text }
        try await eventually { try await metrics().contains("gateway_websocket_connections{route=\"live\"} 2") }
        let exposition = try await metrics()
        #expect(exposition.contains("gateway_websocket_upgrades_refused_total{route=\"live\",status=\"429\"} 1"), "\(exposition.split(separator: "\n").filter { $0.contains("websocket") })")
        // The other user's echo has ended, closed by one side or the other.
        #expect(exposition.contains("gateway_websocket_closes_total{"), "\(exposition.split(separator: "\n").filter { $0.contains("websocket") })")

        // A closed connection gives its place back.
        first.stop()
        try await eventually { try await metrics().contains("gateway_websocket_connections{route=\"live\"} 1") }
        let again = try await Self.client(gateway, path: "/live/rides", headers: headers)
        #expect(again["status"] as? Int == 101, "\(again)")
    }

    @Test func aSilentSocketIsClosedWithGoingAwayAfterTheStreamIdleTimeout() async throws {
        let (redis, upstream, gateway) = try await Self.start()
        defer { withExtendedLifetime(redis) {} }
        defer { upstream.stop() }
        let socket = try await WebSocketClientProcess.start(gateway, path: "/quiet/feed", headers: [])
        defer { socket.stop() }
        let result = try await socket.result(timeout: .seconds(10))
        #expect(result["close"] as? Int == 1001, "\(result)")
        let after = try #require(result["closed_after"] as? Double)
        #expect(after >= 0.9 && after < 5, "closed \(after) s after opening, stream_idle_timeout 1s")
    }

    @Test func framesEchoOverTLS() async throws {
        let certificates = try await TestCertificates()
        let server = try await certificates.issue("gateway")
        let redis = try await RedisServer()
        defer { withExtendedLifetime(redis) {} }
        let upstream = try await WebSocketScripts.upstream()
        defer { upstream.stop() }
        let yaml = DriverYAML.make(redis: redis, extra: """
            tls: {cert_file: \(server.certFile), key_file: \(server.keyFile)}
            routes:
              - {name: open-live, path_prefix: /live, upstream: \(upstream.url), auth: none, websocket: true}
            """)
        let gateway = try await GatewayProcess(yaml: yaml)
        let result = try await Self.client(gateway, path: "/live/tls", headers: [], caFile: certificates.caFile)
        #expect(result["status"] as? Int == 101, "\(result)")
        #expect(result["text"] as? String == "hello through the gateway", "\(result)")
        #expect(result["binary_ok"] as? Bool == true, "\(result)")
        #expect(result["close"] as? Int == 1000, "\(result)")
    }

    @Test func aMissingOrBadTokenIsRefusedAndTheUpstreamSeesNoConnection() async throws {
        let (redis, upstream, gateway) = try await Self.start()
        defer { withExtendedLifetime(redis) {} }
        defer { upstream.stop() }
        for (headers, code) in [([String](), "MISSING_TOKEN"), (["Authorization: Bearer not.a.token"], "INVALID_TOKEN")] {
            let result = try await Self.client(gateway, path: "/live/rides", headers: headers)
            #expect(result["status"] as? Int == 401, "\(result)")
            let body = try DriverPython.jsonObject(result["body"] as? String ?? "")
            #expect((body["error"] as? [String: Any])?["code"] as? String == code, "\(body)")
        }
        #expect(Self.handshakes(upstream).isEmpty, "\(upstream.log)")
    }

    @Test func anUpgradeOnARouteWithoutWebSocketsIsRefusedInTheErrorShape() async throws {
        let (redis, upstream, gateway) = try await Self.start()
        defer { withExtendedLifetime(redis) {} }
        defer { upstream.stop() }
        let result = try await Self.client(gateway, path: "/plain/rides", headers: [])
        #expect(result["status"] as? Int == 400, "\(result)")
        let body = try DriverPython.jsonObject(result["body"] as? String ?? "")
        #expect((body["error"] as? [String: Any])?["code"] as? String == "INVALID_REQUEST", "\(body)")
        #expect(Self.handshakes(upstream).isEmpty, "\(upstream.log)")
    }
}
