import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// Web apps against real processes (docs/public-api.md, "Web apps"): the refresh token in an
/// `HttpOnly` cookie, the CSRF checks on the calls that use it, CORS on `/auth/*` and on
/// proxied routes, and the cookie never leaving the gateway.
@Suite("Web sessions: refresh cookie, CSRF and CORS", .realProcesses)
struct WebSessionTests {
    static let app = "http://localhost:5173"
    static let other = "https://evil.example.com"
    static let exposed = "RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, X-Request-Id"

    private func gateway(redis: RedisServer, upstream: EchoUpstreamProcess, extra: String = "") async throws -> GatewayProcess {
        try await GatewayProcess(yaml: DriverYAML.make(
            redis: redis, upstream: upstream, tokens: "{refresh_ttl: 7d, refresh_reuse_interval: 60s}",
            extra: "web: {allowed_origins: [\"\(Self.app)\", \"https://app.example.com\"]}\n" + extra
        ))
    }

    /// A call as a browser page makes it: `Origin`, and the cookie when given.
    private func web(
        _ gateway: GatewayProcess, _ path: String, origin: String? = app, cookie: String? = nil, body: String? = nil,
        headers: [(String, String)] = []
    ) async throws -> DriverResponse {
        var fields = headers
        if let origin { fields.append(("Origin", origin)) }
        if let cookie { fields.append(("Cookie", "theme=dark; __Host-pg_refresh=\(cookie)")) }
        return try await DriverHTTP.call(gateway.baseURL + path, method: .POST, headers: fields, body: body)
    }

    private func webLogin(_ gateway: GatewayProcess, phone: String = "9876543210") async throws -> (access: String, cookie: String, answer: DriverResponse) {
        #expect(try await DriverAPI.trigger(gateway, phone: phone).status == 200)
        let answer = try await web(gateway, "/auth/otp/verify", body: DriverHTTP.json(["phone": phone, "otp": DriverAPI.uatCode]))
        try #require(answer.status == 200, "\(answer)")
        return (try #require(answer.string("access_token")), try cookieToken(answer), answer)
    }

    /// The token a `Set-Cookie` hands the browser, after checking every attribute.
    private func cookieToken(_ answer: DriverResponse) throws -> String {
        let cookies = answer.headers["Set-Cookie"]
        try #require(cookies.count == 1, "\(answer.headers)")
        let parts = cookies[0].split(separator: "; ").map(String.init)
        try #require(parts.count == 6, "\(cookies[0])")
        #expect(parts[0].hasPrefix("__Host-pg_refresh="))
        #expect(Array(parts[1...]) == ["Max-Age=604800", "Path=/", "HttpOnly", "Secure", "SameSite=Strict"])
        let token = String(parts[0].dropFirst("__Host-pg_refresh=".count))
        #expect(token.count == 64)
        return token
    }

    private func expectCORS(_ answer: DriverResponse, origin: String = app, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.headers["Access-Control-Allow-Origin"] == [origin], "\(answer.headers)", sourceLocation: sourceLocation)
        #expect(answer.headers["Access-Control-Allow-Credentials"] == ["true"], sourceLocation: sourceLocation)
        #expect(answer.headers["Access-Control-Expose-Headers"] == [Self.exposed], sourceLocation: sourceLocation)
        #expect(answer.headers["Vary"].contains("Origin"), sourceLocation: sourceLocation)
    }

    private func expectNoCORSAllow(_ answer: DriverResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        let allow = answer.headers.filter { $0.name.lowercased().hasPrefix("access-control-allow-") }
        #expect(allow.isEmpty, "\(answer.headers)", sourceLocation: sourceLocation)
    }

    @Test func aWebLoginPutsTheRefreshTokenInTheCookieOnlyAndNativeAppsAreUnchanged() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await gateway(redis: redis, upstream: upstream)
        let login = try await webLogin(gateway)
        #expect(login.answer.json["refresh_token"] == nil)
        #expect(!login.answer.text.contains(login.cookie))
        #expect(login.answer.header("Cache-Control") == "no-store")
        expectCORS(login.answer)
        #expect(try await DriverAPI.profile(gateway, token: login.access).status == 200)

        // No Origin (a native app, a partner backend): the token in the body, no cookie, no CORS.
        let native = try await DriverAPI.login(gateway, phone: "9876543211")
        #expect(native.answer.headers["Set-Cookie"].isEmpty)
        expectNoCORSAllow(native.answer)
        let refreshed = try DriverTokenPair(try await DriverAPI.refresh(gateway, native.refreshToken))
        #expect(refreshed.answer.headers["Set-Cookie"].isEmpty)
        let empty = try await DriverAPI.post(gateway, "/auth/token/refresh", body: nil)
        #expect(empty.status == 400 && empty.code == "INVALID_REQUEST", "\(empty)")

        // An origin not in the list is not a web call: body token, and nothing to read it with.
        #expect(try await DriverAPI.trigger(gateway, phone: "9876543211").status == 200)
        let outsider = try await web(gateway, "/auth/otp/verify", origin: Self.other, body: DriverHTTP.json(["phone": "9876543211", "otp": DriverAPI.uatCode]))
        #expect(outsider.status == 200)
        #expect(outsider.headers["Set-Cookie"].isEmpty)
        expectNoCORSAllow(outsider)
    }

    @Test func aWebRefreshRotatesTheCookieWithTheRetryWindowAndReuseDetection() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await gateway(redis: redis, upstream: upstream)
        let login = try await webLogin(gateway)

        // An empty body and `{}` both take the cookie.
        let first = try await web(gateway, "/auth/token/refresh", cookie: login.cookie)
        #expect(first.status == 200, "\(first)")
        let b = try cookieToken(first)
        #expect(b != login.cookie)
        #expect(first.json["refresh_token"] == nil)
        #expect(!first.text.contains(b))
        expectCORS(first)
        // The response was lost: the retry inside the reuse interval gets the same cookie.
        let retry = try await web(gateway, "/auth/token/refresh", cookie: login.cookie, body: "{}")
        #expect(retry.status == 200, "\(retry)")
        #expect(try cookieToken(retry) == b)
        #expect(retry.string("access_token") != first.string("access_token"))

        let c = try cookieToken(try await web(gateway, "/auth/token/refresh", cookie: b))
        let firstAccess = try #require(first.string("access_token"))
        let bearer = try #require(DriverJWT.claims(firstAccess)?["sid"] as? String)
        // Once `b` was rotated, presenting `a` again is reuse: the whole session ends.
        let reused = try await web(gateway, "/auth/token/refresh", cookie: login.cookie)
        #expect(reused.status == 401 && reused.code == "INVALID_TOKEN", "\(reused)")
        expectCORS(reused)
        #expect(try await web(gateway, "/auth/token/refresh", cookie: c).status == 401)
        #expect(try await redis.cli("HGET", "pg:rtfam:{\(bearer)}", "state") == "revoked")

        // No cookie at all from the app (logged out, or never in): 401, not a server error.
        let none = try await web(gateway, "/auth/token/refresh")
        #expect(none.status == 401 && none.code == "INVALID_TOKEN", "\(none)")
    }

    @Test func aRefusedCSRFAttemptChangesNothingAndTheSessionGoesOn() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await gateway(redis: redis, upstream: upstream)
        let login = try await webLogin(gateway)

        let attempts: [(origin: String?, headers: [(String, String)])] = [
            (Self.other, []),
            (nil, []),
            (Self.app, [("Sec-Fetch-Site", "cross-site")]),
            ("null", []),
        ]
        for attempt in attempts {
            let refresh = try await web(gateway, "/auth/token/refresh", origin: attempt.origin, cookie: login.cookie, headers: attempt.headers)
            #expect(refresh.status == 403 && refresh.code == "FORBIDDEN" && refresh.isErrorShape, "\(attempt): \(refresh)")
            #expect(refresh.headers["Set-Cookie"].isEmpty)
            let logout = try await web(
                gateway, "/auth/logout", origin: attempt.origin, cookie: login.cookie,
                headers: attempt.headers + [("Authorization", "Bearer \(login.access)")]
            )
            #expect(logout.status == 403 && logout.code == "FORBIDDEN", "\(attempt): \(logout)")
        }
        // A page of another origin with no cookie to send (SameSite) is refused the same way.
        let cookieless = try await web(gateway, "/auth/token/refresh", origin: Self.other)
        #expect(cookieless.status == 403 && cookieless.code == "FORBIDDEN", "\(cookieless)")
        // Same-site and same-origin fetches are what the app does.
        #expect(try await web(gateway, "/auth/token/refresh", cookie: login.cookie, headers: [("Sec-Fetch-Site", "same-site")]).status == 200)
        // One credential per request.
        let both = try await web(gateway, "/auth/token/refresh", cookie: login.cookie, body: DriverHTTP.json(["refresh_token": login.cookie]))
        #expect(both.status == 400 && both.code == "INVALID_REQUEST", "\(both)")

        #expect(try await DriverAPI.profile(gateway, token: login.access).status == 200)
    }

    @Test func refusedAttemptsLeaveRedisAsItWas() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await gateway(redis: redis, upstream: upstream)
        let login = try await webLogin(gateway)
        let sid = try #require(DriverJWT.claims(login.access)?["sid"] as? String)
        let snapshot = { try await redis.cli("HGETALL", "pg:rtfam:{\(sid)}") + (try await redis.cli("KEYS", "*\(sid)*")) }
        let before = try await snapshot()
        for origin in [Self.other, "null"] {
            #expect(try await web(gateway, "/auth/token/refresh", origin: origin, cookie: login.cookie).status == 403)
            #expect(try await web(gateway, "/auth/logout", origin: origin, cookie: login.cookie, headers: [("Authorization", "Bearer \(login.access)")]).status == 403)
        }
        #expect(try await web(gateway, "/auth/token/refresh", cookie: login.cookie, body: DriverHTTP.json(["refresh_token": login.cookie])).status == 400)
        #expect(try await snapshot() == before)
        // The session is untouched: its token still rotates (not a retry: a new successor).
        let next = try await web(gateway, "/auth/token/refresh", cookie: login.cookie)
        #expect(next.status == 200, "\(next)")
        #expect(try await snapshot() != before)
    }

    @Test func aWebLogoutClearsTheCookieAndEndsTheLogin() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await gateway(redis: redis, upstream: upstream)
        let login = try await webLogin(gateway)
        let logout = try await web(gateway, "/auth/logout", cookie: login.cookie, headers: [("Authorization", "Bearer \(login.access)")])
        #expect(logout.status == 204, "\(logout)")
        #expect(logout.headers["Set-Cookie"] == ["__Host-pg_refresh=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Strict"])
        expectCORS(logout)
        #expect(try await web(gateway, "/auth/token/refresh", cookie: login.cookie).status == 401)
        #expect(try await DriverAPI.profile(gateway, token: login.access).status == 401)

        // A native logout is as before: no cookie to clear.
        let native = try await DriverAPI.login(gateway, phone: "9876543211")
        let nativeLogout = try await DriverAPI.logout(gateway, access: native.accessToken, refreshToken: native.refreshToken)
        #expect(nativeLogout.status == 204)
        #expect(nativeLogout.headers["Set-Cookie"].isEmpty)
    }

    @Test func preflightsAreAnsweredByTheGatewayBeforeAuthentication() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await gateway(redis: redis, upstream: upstream)
        for path in ["/user/profile", "/auth/token/refresh", "/auth/otp/verify"] {
            let preflight = try await DriverHTTP.call(gateway.baseURL + path, method: .OPTIONS, headers: [
                ("Origin", Self.app), ("Access-Control-Request-Method", "POST"), ("Access-Control-Request-Headers", "authorization, content-type"),
            ])
            #expect(preflight.status == 204, "\(path): \(preflight)")
            #expect(preflight.text.isEmpty)
            #expect(preflight.headers["Access-Control-Allow-Origin"] == [Self.app], "\(path)")
            #expect(preflight.headers["Access-Control-Allow-Credentials"] == ["true"])
            #expect(preflight.headers["Access-Control-Allow-Methods"] == ["GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"])
            #expect(preflight.headers["Access-Control-Allow-Headers"] == ["Authorization, Content-Type, X-Request-Id, Idempotency-Key"])
            #expect(preflight.headers["Access-Control-Max-Age"] == ["600"])
            #expect(preflight.headers["Vary"] == ["Origin"])
            #expect(preflight.header("X-Request-Id") != nil)

            let refused = try await DriverHTTP.call(gateway.baseURL + path, method: .OPTIONS, headers: [
                ("Origin", Self.other), ("Access-Control-Request-Method", "GET"),
            ])
            #expect(refused.status == 204, "\(path): \(refused)")
            expectNoCORSAllow(refused)
        }
        // An OPTIONS that is not a preflight is a request like any other: it needs a token.
        let plain = try await DriverHTTP.call(gateway.baseURL + "/user/profile", method: .OPTIONS, headers: [("Origin", Self.app)])
        #expect(plain.status == 401 && plain.code == "MISSING_TOKEN", "\(plain)")
        expectCORS(plain)
    }

    @Test func proxiedResponsesCarryCORSForAllowedOriginsOnly() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await gateway(redis: redis, upstream: upstream)
        let login = try await webLogin(gateway)
        let allowed = try await DriverHTTP.call(gateway.baseURL + "/user/profile", headers: [("Authorization", "Bearer \(login.access)"), ("Origin", Self.app)])
        #expect(allowed.status == 200)
        expectCORS(allowed)
        #expect(DriverEcho.single(allowed, "X-Gateway-User-Id") != nil)
        let other = try await DriverHTTP.call(gateway.baseURL + "/user/profile", headers: [("Authorization", "Bearer \(login.access)"), ("Origin", Self.other)])
        #expect(other.status == 200)
        expectNoCORSAllow(other)
        // The gateway's own refusals are readable by the app too (it needs the 401 to log in again).
        let refused = try await DriverHTTP.call(gateway.baseURL + "/user/profile", headers: [("Origin", Self.app)])
        #expect(refused.status == 401)
        expectCORS(refused)
    }

    @Test func theUpstreamsCORSIsReplacedAndARouteMayLeaveCORSToItsUpstream() async throws {
        let redis = try await RedisServer()
        let scripted = try await ScriptedUpstream(serving: """
            def serve(connection):
                for head in request_heads(connection):
                    print(head.split(b"\\r\\n")[0].decode(), flush=True)
                    connection.sendall(b"HTTP/1.1 200 OK\\r\\nAccess-Control-Allow-Origin: *\\r\\n"
                        b"Access-Control-Allow-Headers: X-Custom\\r\\nContent-Length: 2\\r\\n\\r\\nok")
            """)
        defer { scripted.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: """
            web: {allowed_origins: ["\(Self.app)"]}
            routes:
              - {name: owned, path_prefix: /owned, upstream: "http://127.0.0.1:\(scripted.port)", auth: none}
              - {name: theirs, path_prefix: /theirs, upstream: "http://127.0.0.1:\(scripted.port)", auth: none, cors: false}
            """))
        let owned = try await DriverHTTP.call(gateway.baseURL + "/owned/x", headers: [("Origin", Self.app)])
        #expect(owned.status == 200 && owned.text == "ok", "\(owned)")
        expectCORS(owned)
        #expect(owned.headers["Access-Control-Allow-Headers"].isEmpty)
        let ownedOther = try await DriverHTTP.call(gateway.baseURL + "/owned/x", headers: [("Origin", Self.other)])
        expectNoCORSAllow(ownedOther)
        let preflight = try await DriverHTTP.call(gateway.baseURL + "/owned/x", method: .OPTIONS, headers: [("Origin", Self.app), ("Access-Control-Request-Method", "PUT")])
        #expect(preflight.status == 204)

        let theirs = try await DriverHTTP.call(gateway.baseURL + "/theirs/x", headers: [("Origin", Self.app)])
        #expect(theirs.headers["Access-Control-Allow-Origin"] == ["*"])
        #expect(theirs.headers["Access-Control-Allow-Headers"] == ["X-Custom"])
        #expect(theirs.headers["Access-Control-Allow-Credentials"].isEmpty)
        let theirPreflight = try await DriverHTTP.call(gateway.baseURL + "/theirs/x", method: .OPTIONS, headers: [("Origin", Self.app), ("Access-Control-Request-Method", "PUT")])
        #expect(theirPreflight.status == 200 && theirPreflight.text == "ok", "\(theirPreflight)")

        // The upstream saw the two GETs, the opted-out route's preflight, and nothing else.
        try await eventually(timeout: .seconds(5)) { scripted.log.split(separator: "\n").count >= 4 }
        let lines = scripted.log.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("OPTIONS") } == ["OPTIONS /theirs/x HTTP/1.1"], "\(lines)")
        #expect(lines.filter { $0.hasPrefix("GET") }.count == 3, "\(lines)")
    }

    /// Over HTTP/2 the same engine answers: a preflight never reaches the upstream, and the
    /// cookie is cut out of cookie fields a client split (RFC 9113 §8.2.3).
    @Test func overHTTP2PreflightsStayAtTheGatewayAndTheCookieIsCutFromSplitFields() async throws {
        let stack = try await ScriptedTLSGateway(serving: HTTP2CookieTests.recordingUpstream, extra: "web: {allowed_origins: [\"\(Self.app)\"]}\n")
        defer { stack.upstream.stop() }
        let token = String(repeating: "ab", count: 32)
        let outcome = try await stack.probe.exchange([
            .request("OPTIONS", "/open/x", [["origin", Self.app], ["access-control-request-method", "POST"]]),
            .request("OPTIONS", "/open/x", [["origin", Self.other], ["access-control-request-method", "POST"]]),
            .request("GET", "/open/cookies", [["cookie", "a=1"], ["cookie", "__Host-pg_refresh=\(token)"], ["cookie", "b=2"], ["origin", Self.app]]),
            .request("GET", "/open/only", [["cookie", "__Host-pg_refresh=\(token)"]]),
        ])
        #expect(outcome.streams.map(\.status) == [204, 204, 200, 200], "\(outcome)")
        let heads = stack.upstream.log.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8), options: .fragmentsAllowed)) as? String
        }
        try #require(heads.count == 2, "the upstream got: \(stack.upstream.log)")
        #expect(heads.allSatisfy { $0.hasPrefix("GET ") }, "\(heads)")
        let cookies = heads.map { head in head.split(separator: "\r\n").filter { $0.lowercased().hasPrefix("cookie:") }.map(String.init) }
        #expect(cookies == [["cookie: a=1; b=2"], []] || cookies == [["Cookie: a=1; b=2"], []], "\(cookies)")
        #expect(!stack.upstream.log.contains(token))
    }

    @Test func theCookieNeverReachesAnUpstreamALogLineOrATrace() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let receiver = try await OTLPReceiver()
        let gateway = try await gateway(
            redis: redis, upstream: upstream,
            extra: "log: {level: debug, access_log: true}\ntracing: {otlp_endpoint: \"\(receiver.endpoint)\"}"
        )
        let login = try await webLogin(gateway)
        let refreshed = try await web(gateway, "/auth/token/refresh", cookie: login.cookie)
        let current = try cookieToken(refreshed)
        let access = try #require(refreshed.string("access_token"))

        let both = try await DriverHTTP.call(gateway.baseURL + "/user/profile", headers: [
            ("Authorization", "Bearer \(access)"), ("Origin", Self.app), ("Cookie", "theme=dark; __Host-pg_refresh=\(current); lang=en"),
        ])
        #expect(both.status == 200, "\(both)")
        #expect(DriverEcho.header(both, "Cookie") == ["theme=dark; lang=en"])
        let only = try await DriverHTTP.call(gateway.baseURL + "/user/profile", headers: [
            ("Authorization", "Bearer \(access)"), ("Cookie", "__Host-pg_refresh=\(current)"),
        ])
        #expect(only.status == 200, "\(only)")
        #expect(DriverEcho.header(only, "Cookie") == nil)
        #expect(!only.text.contains(current) && !both.text.contains(current))
        _ = try await web(gateway, "/auth/logout", cookie: current, headers: [("Authorization", "Bearer \(access)")])

        await gateway.stop()
        try await eventually(timeout: .seconds(10)) { receiver.spans.contains { $0.kind == "SPAN_KIND_SERVER" } }
        let spans = receiver.spans.map { "\($0.fields)" }.joined(separator: "\n")
        for token in [login.cookie, current] {
            #expect(!gateway.log.contains(token), "a refresh token in the log")
            #expect(!spans.contains(token), "a refresh token in a span")
        }
        #expect(gateway.log.contains("/auth/token/refresh") || gateway.log.contains("refresh"), "the log was read")
    }
}
