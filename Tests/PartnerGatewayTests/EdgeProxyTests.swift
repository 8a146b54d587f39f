import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// Debian's nginx with `auth_request` and Debian's HAProxy with the `auth-request` script, each
/// configured as docs/edges.md says (``ForwardAuthEdge``), in front of the echo upstream, the
/// gateway's authorization listener as their authorizer: what passes reaches the upstream with
/// the gateway's identity fields, what the gateway refuses reaches the client with the
/// gateway's status, fields and body, and never the upstream.
@Suite("Edges: nginx and HAProxy in front of the gateway", .realProcesses)
struct EdgeProxyTests {
    @Test(arguments: ForwardAuthEdge.Kind.allCases)
    func aGoodTokenAndAGoodKeyPassWithTheIdentityAndAnAssertionPyJWTVerifies(_ kind: ForwardAuthEdge.Kind) async throws {
        let setup = try await EdgeSetup.start()
        defer { setup.upstream.stop() }
        let gateway = setup.gateway
        let edge = try await setup.edge(kind)
        let jwks = try await AssertionTests.jwks(gateway).text

        let login = try await DriverAPI.login(gateway, phone: "9876500101")
        let driver = try await DriverHTTP.call(edge.baseURL + "/user/profile?tab=1", headers: [
            ("Authorization", "Bearer \(login.accessToken)"),
            // Spoofed fields a client sends: the edge sets its own from the gateway's answer, or none.
            ("X-Gateway-User-Id", "usr_000000000000000000000000"), ("X-Gateway-Partner-Id", "ptr_spoofed"),
            ("X-Gateway-Key-Id", "key_spoofed"),
        ])
        #expect(driver.status == 200, "\(driver)")
        #expect(driver.string("path") == "/user/profile")
        #expect(DriverEcho.single(driver, "X-Gateway-User-Id") == login.userID, "\(driver)")
        #expect(DriverEcho.single(driver, "X-Gateway-Auth-Channel") == "otp")
        #expect(DriverEcho.header(driver, "X-Gateway-Partner-Id") == nil, "\(driver)")
        #expect(DriverEcho.header(driver, "X-Gateway-Key-Id") == nil, "\(driver)")
        #expect(DriverEcho.header(driver, "Authorization") == nil, "the credential stays at the edge: \(driver)")
        let requestID = try #require(DriverEcho.single(driver, "X-Request-Id"))
        #expect(requestID.count == Self.requestIDLength(kind), "the edge's request id, the gateway's too: \(requestID)")
        // A chunked body: the edge asks about the request without it, then passes it on whole.
        let chunked = try await RawClient.exchange(port: edge.port, send: "POST /user/profile HTTP/1.1\r\nHost: edge.test\r\n"
            + "Authorization: Bearer \(login.accessToken)\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        #expect(chunked.status == 200 && chunked.body.contains(#""body_bytes":5"#), "\(chunked.text)")
        let driverAssertion = try #require(DriverEcho.single(driver, "X-Gateway-Assertion"), "\(driver)")
        let driverClaims = try #require(try await AssertionTests.verify(driverAssertion, jwks: jwks, audience: "user-profile", issuer: "partner-gateway")["claims"] as? [String: Any])
        #expect(driverClaims["sub"] as? String == login.userID)
        #expect(driverClaims["channel"] as? String == "otp")
        // The access line is written after the answer: wait for it rather than race it.
        try await eventually(timeout: .seconds(10)) { gateway.log.contains(#""listener":"authz""#) && gateway.log.contains(#""decision":"allowed""#) }

        let (partnerID, keyID, key) = try await setup.partnerAndKey()
        let partner = try await DriverHTTP.call(edge.baseURL + "/orders/7", headers: [("X-API-Key", key), ("X-Gateway-User-Id", "usr_000000000000000000000000")])
        #expect(partner.status == 200, "\(partner)")
        #expect(DriverEcho.single(partner, "X-Gateway-Partner-Id") == partnerID, "\(partner)")
        #expect(DriverEcho.single(partner, "X-Gateway-Key-Id") == keyID, "\(partner)")
        #expect(DriverEcho.single(partner, "X-Gateway-Auth-Channel") == "api_key")
        #expect(DriverEcho.header(partner, "X-Gateway-User-Id") == nil, "\(partner)")
        #expect(DriverEcho.header(partner, "X-API-Key") == nil, "\(partner)")
        let partnerAssertion = try #require(DriverEcho.single(partner, "X-Gateway-Assertion"))
        let verified = try await AssertionTests.verify(partnerAssertion, jwks: jwks, audience: "orders", issuer: "partner-gateway")
        let partnerClaims = try #require(verified["claims"] as? [String: Any])
        #expect(partnerClaims["sub"] as? String == partnerID && partnerClaims["channel"] as? String == "api_key")
        #expect(verified["tampered_refused"] as? Bool == true)

        // An open route passes with no identity at all; a path no route takes is the gateway's 404.
        let open = try await DriverHTTP.call(edge.baseURL + "/status", headers: [("X-Gateway-User-Id", "usr_000000000000000000000000")])
        #expect(open.status == 200 && DriverEcho.header(open, "X-Gateway-User-Id") == nil, "\(open)")
        let before = setup.upstreamRequests
        let nowhere = try await DriverHTTP.call(edge.baseURL + "/nowhere", headers: [("Authorization", "Bearer \(login.accessToken)")])
        #expect(nowhere.status == 404 && nowhere.code == "NOT_FOUND" && nowhere.isErrorShape, "\(nowhere)")
        #expect(setup.upstreamRequests == before)
    }

    @Test(arguments: ForwardAuthEdge.Kind.allCases)
    func everyRefusalReachesTheClientWithTheGatewaysStatusAndTheUpstreamSeesNothing(_ kind: ForwardAuthEdge.Kind) async throws {
        let setup = try await EdgeSetup.start()
        defer { setup.upstream.stop() }
        let gateway = setup.gateway
        let edge = try await setup.edge(kind)
        let login = try await DriverAPI.login(gateway, phone: "9876500102")
        let revoked = try await DriverAPI.login(gateway, phone: "9876500103")
        #expect(try await DriverAPI.logout(gateway, access: revoked.accessToken).status == 204)
        let expired = try await DriverPython.run(
            """
            import secrets, sys, time, jwt
            now = int(time.time())
            print(jwt.encode({"user_id": sys.argv[2], "sid": secrets.token_hex(8), "jti": secrets.token_hex(8), "iss": "partner-gateway",
                              "iat": now - 7200, "exp": now - 3600, "channel": "otp"}, sys.argv[1].encode(), algorithm="HS256", headers={"kid": "k1"}))
            """,
            [GatewayProcess.jwtSecret, login.userID]
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        let (_, keyID, key) = try await setup.partnerAndKey()
        let (_, _, unscoped) = try await setup.partnerAndKey(scopes: [])
        let (_, meteredID, metered) = try await setup.partnerAndKey()
        _ = try await PartnerControlsProcessTests.admin(gateway, .PATCH, "/v1/keys/\(keyID)", #"{"allowed_cidrs": ["127.0.0.1/32"]}"#)
        _ = try await PartnerControlsProcessTests.admin(gateway, .PATCH, "/v1/keys/\(meteredID)", #"{"quota": {"limit": 1, "period": "day"}}"#)
        // The limited route's two calls, and the quota's one, spent through the edge.
        for remaining in ["1", "0"] {
            let allowed = try await DriverHTTP.call(edge.baseURL + "/rides/1", headers: [("Authorization", "Bearer \(login.accessToken)")])
            #expect(allowed.status == 200, "\(allowed)")
            // The route's limit reaches the client on an allowed answer too.
            #expect(allowed.header("RateLimit-Limit") == "2" && allowed.header("RateLimit-Remaining") == remaining, "\(allowed.headers)")
        }
        #expect(try await DriverHTTP.call(edge.baseURL + "/orders/1", headers: [("X-API-Key", metered)]).status == 200)
        let before = setup.upstreamRequests

        let bearer = { (token: String) in [("Authorization", "Bearer \(token)")] }
        let refusals: [(name: String, path: String, headers: [(String, String)], status: UInt, code: String)] = [
            ("missing token", "/user/profile", [], 401, "MISSING_TOKEN"),
            ("forged token", "/user/profile", bearer(String(login.accessToken.dropLast(4)) + "AAAA"), 401, "INVALID_TOKEN"),
            ("expired token", "/user/profile", bearer(expired), 401, "INVALID_TOKEN"),
            ("revoked token", "/user/profile", bearer(revoked.accessToken), 401, "INVALID_TOKEN"),
            ("missing key", "/orders/1", [], 401, "MISSING_API_KEY"),
            ("forged key", "/orders/1", [("X-API-Key", String(key.dropLast(4)) + "AAAA")], 401, "INVALID_API_KEY"),
            ("key without the route's scope", "/orders/1", [("X-API-Key", unscoped)], 403, "FORBIDDEN"),
            ("spent rate limit", "/rides/1", bearer(login.accessToken), 429, "RATE_LIMIT_EXCEEDED"),
            ("spent quota", "/orders/1", [("X-API-Key", metered)], 429, "QUOTA_EXCEEDED"),
            // A client's own Traefik field must not make the gateway ask about an open route.
            ("spoofed X-Forwarded-Uri", "/user/profile", [("X-Forwarded-Uri", "/status"), ("X-Forwarded-Method", "GET")], 401, "MISSING_TOKEN"),
        ]
        for refusal in refusals {
            let answer = try await DriverHTTP.call(edge.baseURL + refusal.path, headers: refusal.headers)
            #expect(answer.status == refusal.status && answer.code == refusal.code && answer.isErrorShape, "\(refusal.name): \(answer)")
            #expect(answer.header("Content-Type") == "application/json", "\(refusal.name): \(answer.headers)")
            #expect(answer.header("X-Request-Id")?.count == Self.requestIDLength(kind), "\(refusal.name): \(answer.headers)")
            if refusal.status == 429 {
                let retryAfter = try #require(answer.header("Retry-After").flatMap { Int($0) }, "\(refusal.name): \(answer.headers)")
                #expect(retryAfter >= 1, "\(refusal.name)")
                #expect(answer.header("RateLimit-Remaining") == "0", "\(refusal.name): \(answer.headers)")
            }
        }
        // The allowlist: the same key from an address outside it (the edge names the client).
        let outside = try await SourceAddressClient.get(port: edge.port, path: "/orders/1", key: key, from: "127.0.0.2")
        #expect(outside.status == 403 && outside.text.contains(#""code":"FORBIDDEN""#) && outside.text.contains("address"), "\(outside.text)")
        let inside = try await SourceAddressClient.get(port: edge.port, path: "/orders/1", key: key, from: "127.0.0.1")
        #expect(inside.status == 200, "\(inside.text)")
        #expect(setup.upstreamRequests == before + 1, "only the allowed request reached the upstream: \(setup.upstream.receivedPaths)")
        if kind == .nginx {
            // nginx says which statuses it had to map back: every one it does not pass as it is.
            #expect(edge.errorLog.contains("auth request unexpected status: 429"))
        }
    }

    @Test(arguments: ForwardAuthEdge.Kind.allCases)
    func aGatewayThatDoesNotAnswerIsAServiceUnavailableAndTheUpstreamSeesNothing(_ kind: ForwardAuthEdge.Kind) async throws {
        let setup = try await EdgeSetup.start()
        defer { setup.upstream.stop() }
        let edge = try await setup.edge(kind)
        setup.gateway.kill()
        let answer = try await DriverHTTP.call(edge.baseURL + "/status")
        #expect(answer.status == 503 && answer.code == "SERVICE_UNAVAILABLE" && answer.isErrorShape, "\(answer)")
        #expect(setup.upstreamRequests == 0, "\(setup.upstream.receivedPaths)")
    }

    /// The length of the request id the edge makes: nginx's `$request_id` (32 hex characters),
    /// HAProxy's `uuid()` (36).
    static func requestIDLength(_ kind: ForwardAuthEdge.Kind) -> Int {
        switch kind {
        case .nginx: 32
        case .haproxy: 36
        }
    }
}
