import Foundation
import Testing
import TestSupport

/// A WebSocket opens with the credential that was admitted, not one read again when the
/// upstream's `101` arrives: a logout while the upstream holds its `101`, or a token's expiry
/// meanwhile, closes the socket at once; and a key's socket ends with the key (its expiry, the
/// end of a rotation's grace, an allowlist that no longer admits the socket's address).
@Suite("Proxy: WebSockets keep the credential they were admitted with", .serialized, .timingSensitive)
struct WebSocketAdmittedCredentialTests {
    private static func yaml(redis: RedisServer, upstream: ScriptedUpstream, tokens: String? = nil) -> String {
        DriverYAML.make(redis: redis, tokens: tokens) + """
            routes:
              - {name: live, path_prefix: /live, upstream: \(upstream.url), auth: bearer, websocket: true}
              - {name: feed, path_prefix: /feed, upstream: \(upstream.url), auth: api_key, websocket: true}

            """
    }

    @Test func aLogoutWhileTheUpstreamHoldsItsSwitchClosesTheSocketAtOnce() async throws {
        let folder = try TemporaryFolder("pg-ws-hold")
        let release = folder.path("release")
        let redis = try await RedisServer()
        let upstream = try await WebSocketScripts.upstream(holdUntil: release)
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, upstream: upstream))
        let login = try await DriverAPI.login(gateway, phone: "9876500231")
        let socket = try await WebSocketClientProcess.start(
            gateway, path: "/live/rides", headers: ["Authorization: Bearer \(login.accessToken)"], awaitingOpen: false
        )
        defer { socket.stop() }
        // Admitted and forwarded: the upstream has the handshake and holds its answer.
        try await eventually(timeout: .seconds(10)) { upstream.log.contains("\"request\"") }

        let since = Date()
        #expect(try await DriverAPI.logout(gateway, access: login.accessToken).status == 204)
        FileManager.default.createFile(atPath: release, contents: nil)

        let result = try await socket.result(timeout: .seconds(5))
        #expect(result["status"] as? Int == 101, "\(result)")
        #expect(result["close"] as? Int == 1008, "\(result)")
        let closedAt = try #require(result["closed_at"] as? Double)
        print("WebSocketAdmittedCredentialTests: closed \(Int((closedAt - since.timeIntervalSince1970) * 1000)) ms after the logout")
        #expect(closedAt - since.timeIntervalSince1970 < 1.0, "closed \(closedAt - since.timeIntervalSince1970) s after the logout")
        withExtendedLifetime(redis) {}
    }

    /// 77 handshakes from a second before the token's `exp` to past its leeway, each `101`
    /// held a little by the upstream: no socket is open a second after `exp`.
    @Test func handshakesAroundTheTokensExpiryLeaveNoSocketOpenASecondAfterIt() async throws {
        let redis = try await RedisServer()
        let upstream = try await WebSocketScripts.upstream(delay: 0.3)
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, upstream: upstream, tokens: "{access_ttl: 4s}"))
        let login = try await DriverAPI.login(gateway, phone: "9876500232")
        let expiry = try #require(DriverJWT.claims(login.accessToken)?["exp"] as? Double)
        let headers = String(decoding: try JSONSerialization.data(withJSONObject: ["Authorization: Bearer \(login.accessToken)"]), as: UTF8.self)
        let result = try await ShortCommand.run("/usr/bin/env", [
            "python3", "-c", WebSocketScripts.burst, String(gateway.port), "/live/rides", headers,
            String(expiry - 1.0), "0.09", "77", String(expiry + 8.0),
        ])
        try #require(result.status == 0, "\(result.stderr)")
        let handshakes = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(handshakes.count == 77)
        var opened = 0
        for (index, handshake) in handshakes.enumerated() {
            let status = handshake["status"] as? Int
            #expect(status == 101 || status == 401, "handshake \(index): \(handshake)")
            guard status == 101 else { continue }
            opened += 1
            let closedAt = handshake["closed_at"] as? Double
            #expect(closedAt != nil && closedAt! < expiry + 1.0, "handshake \(index) fired \(((handshake["fired_at"] as? Double) ?? 0) - expiry) s from exp: still open a second after exp (\(handshake))")
            #expect(handshake["close"] as? Int == 1008, "handshake \(index): \(handshake)")
        }
        print("WebSocketAdmittedCredentialTests: \(opened) of 77 handshakes around exp opened, every one closed within a second of exp")
        #expect(opened > 0, "no handshake opened before exp: the test proved nothing")
        withExtendedLifetime(redis) {}
    }

    @Test func aKeysSocketEndsWithTheKeysExpiryItsRotationsGraceAndANarrowedAllowlist() async throws {
        let redis = try await RedisServer()
        let upstream = try await WebSocketScripts.upstream()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, upstream: upstream))
        let partner = try await DriverAPI.createPartner(gateway, name: "Feed Partner")

        func key(_ body: String = "{}") async throws -> (secret: String, id: String) {
            let created = try await DriverAPI.admin(gateway, .POST, "/v1/partners/\(partner)/keys", body: body)
            #expect(created.status == 201, "\(created.text)")
            return (try #require(created.json["key"] as? String), try #require(created.json["key_id"] as? String))
        }
        func open(_ secret: String) async throws -> WebSocketClientProcess {
            try await WebSocketClientProcess.start(gateway, path: "/feed/offers", headers: ["X-API-Key: \(secret)"])
        }
        func expectClosed(_ socket: WebSocketClientProcess, by deadline: Date, _ what: String) async throws {
            let result = try await socket.result(timeout: .seconds(8))
            #expect(result["status"] as? Int == 101, "\(what): \(result)")
            #expect(result["close"] as? Int == 1008, "\(what): \(result)")
            let closedAt = try #require(result["closed_at"] as? Double)
            print("WebSocketAdmittedCredentialTests: \(what): closed \(Int((closedAt - deadline.timeIntervalSince1970) * 1000)) ms after its end")
            #expect(closedAt < deadline.timeIntervalSince1970 + 1.0, "\(what): closed \(closedAt - deadline.timeIntervalSince1970) s after its end")
        }

        let expiring = try await key("{\"expires_in\": \"3s\"}")
        let expiresAt = Date().addingTimeInterval(3)
        let rotated = try await key()
        let narrowed = try await key()
        let bystander = try await key()
        let sockets = (try await open(expiring.secret), try await open(rotated.secret), try await open(narrowed.secret), try await open(bystander.secret))
        defer { [sockets.0, sockets.1, sockets.2, sockets.3].forEach { $0.stop() } }

        let rotation = try await DriverAPI.admin(gateway, .POST, "/v1/keys/\(rotated.id)/rotate", body: "{\"grace\": \"2s\"}")
        #expect(rotation.status == 200, "\(rotation.text)")
        let graceEnds = Date().addingTimeInterval(2)

        let since = Date()
        let update = try await DriverAPI.admin(gateway, .PATCH, "/v1/keys/\(narrowed.id)", body: "{\"allowed_cidrs\": [\"203.0.113.0/24\"]}")
        #expect(update.status == 200, "\(update.text)")
        try await expectClosed(sockets.2, by: since, "allowlist narrowed")
        try await expectClosed(sockets.1, by: graceEnds, "rotation's grace ended")
        try await expectClosed(sockets.0, by: expiresAt, "key expired")
        #expect(sockets.3.ended == nil, "a bystander key's socket was closed: \(sockets.3.ended ?? [:])")
        withExtendedLifetime(redis) {}
    }
}
