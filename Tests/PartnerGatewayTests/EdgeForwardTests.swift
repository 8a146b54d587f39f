import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// `/forward` as Envoy's `ext_authz` HTTP service and Traefik's `forwardAuth` call it, with the
/// fields their documentation says they send (docs/edges.md): the same decisions for both, the
/// gateway's error body on refusals (both edges pass it to the client), the identity fields and
/// Envoy's list of fields to remove on the allowed ones. Also: the listener over TLS with HTTP/2,
/// its metrics and access lines, and a route with `upstream: none` on the public listener.
@Suite("Edges: Envoy's and Traefik's forward requests", .realProcesses)
struct EdgeForwardTests {
    /// The request Envoy's ext_authz HTTP service sends for a client's `method path`: the path
    /// after `/forward` (its `path_prefix`), the client's method and `Host`, `Authorization` and
    /// the allowed headers as the client sent them, `Content-Length: 0`, the client's address
    /// appended to `X-Forwarded-For` (`use_remote_address`).
    static func envoy(_ gateway: GatewayProcess, _ method: HTTPMethod, _ path: String, credential: [(String, String)]) async throws -> DriverResponse {
        try await EdgeSetup.forward(gateway, path: "/forward" + path, method: method, headers: [
            ("Host", "api.example.com"), ("Content-Length", "0"), ("X-Forwarded-For", "203.0.113.7"),
            ("X-Request-Id", "envoy-7f3a9c"),
        ] + credential)
    }

    /// The request Traefik's forwardAuth sends: a `GET` to its `address` with every client field
    /// and `X-Forwarded-Method`, `-Proto`, `-Host`, `-Uri`, `-For`.
    static func traefik(_ gateway: GatewayProcess, _ method: HTTPMethod, _ path: String, credential: [(String, String)]) async throws -> DriverResponse {
        try await EdgeSetup.forward(gateway, headers: [
            ("X-Forwarded-Method", method.rawValue), ("X-Forwarded-Proto", "https"), ("X-Forwarded-Host", "api.example.com"),
            ("X-Forwarded-Uri", path), ("X-Forwarded-For", "203.0.113.7"), ("User-Agent", "curl/8.0"), ("Accept", "*/*"),
        ] + credential)
    }

    @Test func envoyAndTraefikGetTheSameDecisionsWithTheGatewaysBodies() async throws {
        let setup = try await EdgeSetup.start()
        defer { setup.upstream.stop() }
        let gateway = setup.gateway
        let login = try await DriverAPI.login(gateway, phone: "9876500301")
        let (partnerID, keyID, key) = try await setup.partnerAndKey()
        let (_, _, unscoped) = try await setup.partnerAndKey(scopes: [])
        let token = [("Authorization", "Bearer \(login.accessToken)")]

        for (edge, ask) in [("envoy", Self.envoy), ("traefik", Self.traefik)] {
            let driver = try await ask(gateway, .POST, "/user/rides?from=home", token)
            #expect(driver.status == 200 && driver.text.isEmpty, "\(edge): \(driver)")
            #expect(driver.header("X-Gateway-User-Id") == login.userID, "\(edge): \(driver.headers)")
            #expect(driver.header("X-Gateway-Auth-Channel") == "otp")
            #expect(driver.header("X-Gateway-Assertion")?.split(separator: ".").count == 3)
            #expect(driver.header("X-Gateway-Partner-Id") == nil && driver.header("X-Gateway-Key-Id") == nil)
            #expect(driver.header("x-envoy-auth-headers-to-remove") == "x-gateway-partner-id, x-gateway-key-id, authorization, x-api-key", "\(edge): \(driver.headers)")
            #expect(driver.header("X-Request-Id")?.isEmpty == false)

            let partner = try await ask(gateway, .GET, "/orders/7", [("X-API-Key", key)])
            #expect(partner.status == 200, "\(edge): \(partner)")
            #expect(partner.header("X-Gateway-Partner-Id") == partnerID && partner.header("X-Gateway-Key-Id") == keyID, "\(edge): \(partner.headers)")
            #expect(partner.header("X-Gateway-Auth-Channel") == "api_key" && partner.header("X-Gateway-User-Id") == nil)
            #expect(partner.header("x-envoy-auth-headers-to-remove") == "x-gateway-user-id, authorization, x-api-key")

            let open = try await ask(gateway, .GET, "/status/now", [])
            #expect(open.status == 200 && open.header("X-Gateway-Assertion") == nil, "\(edge): \(open)")

            for (path, credential, status, code) in [
                ("/user/profile", [], 401, "MISSING_TOKEN"),
                ("/user/profile", [("Authorization", "Bearer not-a-token")], 401, "INVALID_TOKEN"),
                ("/orders/7", [("X-API-Key", "pgk_live_nope")], 401, "INVALID_API_KEY"),
                ("/orders/7", [("X-API-Key", unscoped)], 403, "FORBIDDEN"),
                ("/nowhere", token, 404, "NOT_FOUND"),
                ("/auth/otp/trigger", token, 404, "NOT_FOUND"),
            ] as [(String, [(String, String)], UInt, String)] {
                let refused = try await ask(gateway, .GET, path, credential)
                #expect(refused.status == status && refused.code == code && refused.isErrorShape, "\(edge) \(path): \(refused)")
                #expect(refused.header("X-Gateway-Error") == refused.text, "\(edge): the body again, for nginx: \(refused.headers)")
                #expect(refused.header("X-Gateway-User-Id") == nil)
            }
        }
        // The access lines and the metrics of both: by route, decision and reason.
        try await eventually(timeout: .seconds(5)) {
            gateway.log.contains(#""listener":"authz""#) && gateway.log.contains(#""decision":"refused""#) && gateway.log.contains(#""auth":"FORBIDDEN""#)
        }
        let line = try #require(gateway.log.split(separator: "\n").first { $0.contains(#""listener":"authz""#) && $0.contains(#""route":"orders""#) && $0.contains(#""decision":"allowed""#) })
        #expect(line.contains(#""key_id":"\#(keyID)""#) && line.contains(#""client":"203.0.113.7""#), "\(line)")
        let metrics = try await DriverHTTP.call(gateway.adminURL + "/metrics")
        for series in [
            #"gateway_authorization_decisions_total{kind="forward",route="user-profile",decision="allowed",reason="ok"} 2"#,
            #"gateway_authorization_decisions_total{kind="forward",route="orders",decision="refused",reason="FORBIDDEN"} 2"#,
            #"gateway_authorization_decisions_total{kind="forward",route="unmatched",decision="refused",reason="NOT_FOUND"} 4"#,
            #"gateway_authorization_decisions_total{kind="forward",route="status",decision="allowed",reason="none"} 2"#,
        ] {
            #expect(metrics.text.contains(series), "\(series) in \(metrics.text.split(separator: "\n").filter { $0.contains("authorization_decisions") })")
        }
        #expect(metrics.text.contains(#"gateway_http_requests_total{listener="authz",route="orders",method="GET",status="200"}"#))
    }

    @Test func aForwardRequestNamingNoRequestIsRefusedAndEdgeRoutesAreNotPublic() async throws {
        let setup = try await EdgeSetup.start()
        defer { setup.upstream.stop() }
        let gateway = setup.gateway
        let login = try await DriverAPI.login(gateway, phone: "9876500302")
        let nothing = try await EdgeSetup.forward(gateway, headers: [("Authorization", "Bearer \(login.accessToken)")])
        #expect(nothing.status == 400 && nothing.code == "INVALID_REQUEST" && nothing.isErrorShape, "\(nothing)")
        let escaped = try await EdgeSetup.forward(gateway, headers: [("X-Original-URI", "/user/a%2Fb")])
        #expect(escaped.status == 400 && escaped.code == "INVALID_REQUEST", "\(escaped)")
        // Envoy's path after /forward is the client's own: its `..` cannot climb out of /forward
        // to the listener's /healthz (which answers 200, an allow).
        let climbing = try await RawClient.exchange(port: try #require(gateway.authzPort), send: "GET /forward/../healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        #expect(climbing.status == 400 && climbing.body.contains("INVALID_REQUEST"), "\(climbing.text)")
        // The authorization listener serves nothing of the public listener's: beyond /forward and
        // /healthz, a caller without a credential is refused first, as on the admin listener.
        let publicLogin = try await DriverHTTP.call(gateway.authzURL + "/auth/otp/trigger", method: .POST, body: #"{"phone": "9876500302"}"#)
        #expect(publicLogin.status == 401 && publicLogin.code == "UNAUTHORIZED", "\(publicLogin)")
        #expect(try await DriverHTTP.call(gateway.authzURL + "/healthz").status == 200)

        // A route with upstream: none is the edges' alone: 404 on the public listener, whose other
        // routes are proxied as ever.
        let publicEdgeRoute = try await DriverAPI.profile(gateway, token: login.accessToken)
        #expect(publicEdgeRoute.status == 404 && publicEdgeRoute.code == "NOT_FOUND", "\(publicEdgeRoute)")
        let proxied = try await DriverHTTP.call(gateway.baseURL + "/proxied/x", headers: [("Authorization", "Bearer \(login.accessToken)")])
        #expect(proxied.status == 200 && DriverEcho.single(proxied, "X-Gateway-User-Id") == login.userID, "\(proxied)")
        // The same route asked about by an edge.
        let asked = try await Self.envoy(gateway, .GET, "/proxied/x", credential: [("Authorization", "Bearer \(login.accessToken)")])
        #expect(asked.status == 200 && asked.header("X-Gateway-User-Id") == login.userID, "\(asked)")
        #expect(setup.upstream.receivedPaths == ["/proxied/x"])
    }

    @Test func theListenerServesTLSWithHTTP2() async throws {
        let certificates = try await TestCertificates()
        let server = try await certificates.issue("authz")
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: """
            authz: {tls: {cert_file: \(server.certFile), key_file: \(server.keyFile)}}
            routes:
              - {name: user-profile, path_prefix: /user, upstream: none, auth: bearer}
            """), authz: true)
        let login = try await DriverAPI.login(gateway, phone: "9876500303")
        let base = "https://127.0.0.1:\(try #require(gateway.authzPort))"
        let curl = Curl(caFile: certificates.caFile)
        for version in [Curl.Version.http2, .http1] {
            let allowed = try await curl.call(version, "GET", base + "/forward/user/profile", headers: ["Authorization: Bearer \(login.accessToken)"])
            #expect(allowed.status == 200, "\(allowed)")
            let refused = try await curl.call(version, "GET", base + "/forward/user/profile")
            #expect(refused.status == 401 && (refused.json["error"] as? [String: Any])?["code"] as? String == "MISSING_TOKEN", "\(refused)")
            let climbing = try await curl.call(version, "GET", base + "/forward/../healthz")
            #expect(climbing.status == 400 && climbing.body.contains("INVALID_REQUEST"), "\(version): \(climbing)")
        }
    }
}
