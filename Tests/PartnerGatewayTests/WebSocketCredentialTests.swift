import Foundation
import Testing
import TestSupport

/// A WebSocket lives no longer than its credential: revocations made through one gateway
/// instance close the matching sockets on another (two instances, one Redis) with `1008`
/// within a second, and leave everyone else's open; an expiring token closes its socket.
@Suite("Proxy: WebSockets end with their credential", .serialized, .timingSensitive)
struct WebSocketCredentialTests {
    private static func yaml(redis: RedisServer, upstream: ScriptedUpstream, tokens: String? = nil) -> String {
        DriverYAML.make(redis: redis, tokens: tokens) + """
            routes:
              - {name: live, path_prefix: /live, upstream: \(upstream.url), auth: bearer, websocket: true}
              - {name: feed, path_prefix: /feed, upstream: \(upstream.url), auth: api_key, websocket: true}

            """
    }

    /// Waits for `client`'s close and checks it is `1008`, less than a second after `since`.
    private static func expectPolicyClose(_ client: WebSocketClientProcess, since: Date, _ what: String) async throws {
        let result = try await client.result()
        #expect(result["status"] as? Int == 101, "\(what): \(result)")
        #expect(result["close"] as? Int == 1008, "\(what): \(result)")
        let closedAt = try #require(result["closed_at"] as? Double)
        let after = closedAt - since.timeIntervalSince1970
        print("WebSocketCredentialTests: \(what) closed its socket on the other instance after \(Int(after * 1000)) ms")
        #expect(after >= 0 && after < 1.0, "\(what): closed \(after) s after the revocation")
    }

    @Test func logoutUserRevocationSessionRevocationAndKeyRevocationCloseTheirSocketsOnAnotherInstance() async throws {
        let redis = try await RedisServer()
        let upstream = try await WebSocketScripts.upstream()
        defer { upstream.stop() }
        let yaml = Self.yaml(redis: redis, upstream: upstream)
        let first = try await GatewayProcess(yaml: yaml)
        let second = try await GatewayProcess(yaml: yaml)

        let loggedOut = try await DriverAPI.login(first, phone: "9876500201")
        let revokedUser = try await DriverAPI.login(first, phone: "9876500202")
        let revokedSession = try await DriverAPI.login(first, phone: "9876500203")
        let bystander = try await DriverAPI.login(first, phone: "9876500204")
        let partner = try await DriverAPI.createPartner(first, name: "Socket Partner")
        let revokedKey = try await DriverAPI.createKey(first, partnerID: partner)
        let keptKey = try await DriverAPI.createKey(first, partnerID: partner)
        let otherPartnersKey = try await DriverAPI.createKey(first, partnerID: try await DriverAPI.createPartner(first, name: "Other Partner"))

        func open(_ headers: [String], path: String = "/live/rides") async throws -> WebSocketClientProcess {
            try await WebSocketClientProcess.start(second, path: path, headers: headers)
        }
        let sockets = [
            try await open(["Authorization: Bearer \(loggedOut.accessToken)"]),
            try await open(["Authorization: Bearer \(revokedUser.accessToken)"]),
            try await open(["Authorization: Bearer \(revokedSession.accessToken)"]),
            try await open(["X-API-Key: \(revokedKey)"], path: "/feed/offers"),
        ]
        let bystanders = [
            try await open(["Authorization: Bearer \(bystander.accessToken)"]),
            try await open(["X-API-Key: \(keptKey)"], path: "/feed/offers"),
            try await open(["X-API-Key: \(otherPartnersKey)"], path: "/feed/offers"),
        ]
        defer { (sockets + bystanders).forEach { $0.stop() } }
        for socket in sockets + bystanders {
            #expect(socket.ended == nil, "closed before anything was revoked: \(socket.ended ?? [:])")
        }

        var since = Date()
        #expect(try await DriverAPI.logout(first, access: loggedOut.accessToken).status == 204)
        try await Self.expectPolicyClose(sockets[0], since: since, "logout")

        since = Date()
        #expect(try await DriverAPI.admin(first, .POST, "/v1/users/\(revokedUser.userID)/revoke-sessions").status == 200)
        try await Self.expectPolicyClose(sockets[1], since: since, "user revocation")

        let sessionID = try #require(revokedSession.sessionID)
        since = Date()
        #expect(try await DriverAPI.admin(first, .POST, "/v1/users/\(revokedSession.userID)/sessions/\(sessionID)/revoke").status == 200)
        try await Self.expectPolicyClose(sockets[2], since: since, "session revocation")

        let keyID = try #require(try await DriverAPI.admin(first, .POST, "/v1/keys/find", body: "{\"key\": \"\(revokedKey)\"}").json["key_id"] as? String)
        since = Date()
        #expect(try await DriverAPI.admin(first, .POST, "/v1/keys/\(keyID)/revoke").status == 200)
        try await Self.expectPolicyClose(sockets[3], since: since, "key revocation")

        // Every announcement above reached the second instance before the last close: the
        // other user's and the other key's sockets are still open.
        for socket in bystanders {
            #expect(socket.ended == nil, "a bystander's socket was closed: \(socket.ended ?? [:])")
        }

        // Disabling the partner ends its other key's socket, not another partner's.
        since = Date()
        #expect(try await DriverAPI.admin(first, .POST, "/v1/partners/\(partner)/disable").status == 200)
        try await Self.expectPolicyClose(bystanders[1], since: since, "partner disabled")
        for socket in [bystanders[0], bystanders[2]] {
            #expect(socket.ended == nil, "a bystander's socket was closed: \(socket.ended ?? [:])")
        }
        withExtendedLifetime(redis) {}
    }

    @Test func aReusedRefreshTokenClosesItsSessionsSocketOnAnotherInstance() async throws {
        let redis = try await RedisServer()
        let upstream = try await WebSocketScripts.upstream()
        defer { upstream.stop() }
        let yaml = Self.yaml(redis: redis, upstream: upstream, tokens: "{refresh_reuse_interval: 0s}")
        let first = try await GatewayProcess(yaml: yaml)
        let second = try await GatewayProcess(yaml: yaml)
        let login = try await DriverAPI.login(first, phone: "9876500221")
        let socket = try await WebSocketClientProcess.start(second, path: "/live/rides", headers: ["Authorization: Bearer \(login.accessToken)"])
        defer { socket.stop() }
        // A refresh keeps the session, and the socket with it.
        #expect(try await DriverAPI.refresh(first, login.refreshToken).status == 200)
        #expect(socket.ended == nil, "a refresh closed the session's socket")
        // The spent refresh token presented again: the session is revoked, its socket closed.
        let since = Date()
        #expect(try await DriverAPI.refresh(first, login.refreshToken).status == 401)
        try await Self.expectPolicyClose(socket, since: since, "refresh-token reuse")
        withExtendedLifetime(redis) {}
    }

    @Test func aSocketClosesWhenItsAccessTokenExpires() async throws {
        let redis = try await RedisServer()
        let upstream = try await WebSocketScripts.upstream()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, upstream: upstream, tokens: "{access_ttl: 3s}"))
        let login = try await DriverAPI.login(gateway, phone: "9876500211")
        let expiry = try #require(DriverJWT.claims(login.accessToken)?["exp"] as? Double)
        let socket = try await WebSocketClientProcess.start(gateway, path: "/live/rides", headers: ["Authorization: Bearer \(login.accessToken)"])
        defer { socket.stop() }
        let result = try await socket.result(timeout: .seconds(10))
        #expect(result["close"] as? Int == 1008, "\(result)")
        let closedAt = try #require(result["closed_at"] as? Double)
        print("WebSocketCredentialTests: closed \(Int((closedAt - expiry) * 1000)) ms after the token's exp")
        #expect(closedAt >= expiry - 0.05 && closedAt < expiry + 1.0, "closed at \(closedAt), exp \(expiry)")
        withExtendedLifetime(redis) {}
    }
}
