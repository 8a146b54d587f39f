@testable import GatewayConfiguration
@testable import GatewayEdge
@testable import GatewayProxy
import GatewayAdmission
import HTTPTypes
import NIOHTTP1
import TestSupport
import Testing

/// The in-memory rules of web sessions: `web.allowed_origins`, the CORS fields, the refresh
/// cookie's reading and its removal from what goes upstream.
@Suite struct WebOriginRulesTests {
    /// The fields as HTTP/2 sends them (``HTTP2ResponseBlock``), `:status` left off.
    static func http2Fields(_ head: ProxyResponseHead) -> [String] {
        head.headerBlock().dropFirst().map { "\($0.name): \($0.value)" }
    }

    /// Every field the client gets, in order, names as written (as HTTP/1.1 sends them).
    static func fields(_ head: ProxyResponseHead) -> [(name: String, value: String)] {
        var collected = CollectedFields()
        head.write(into: &collected)
        return collected.fields
    }

    static func visited(_ head: ProxyResponseHead) -> [String] {
        fields(head).map { "\($0.name): \($0.value)" }
    }

    struct CollectedFields: ResponseFieldWriter {
        var fields: [(name: String, value: String)] = []

        mutating func pass(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, line: UnsafeRawBufferPointer) {
            fields.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }

        mutating func add(name: String, value: String) {
            fields.append((name, value))
        }
    }

    static func lowercasedNames(_ fields: [String]) -> [String] {
        fields.map { field in
            let colon = field.firstIndex(of: ":")!
            return field[..<colon].lowercased() + field[colon...]
        }
    }

    @Test func allowedOriginsAreExactOriginsAndRoutesMayOptOut() throws {
        let config = try TestConfig.load("""
            otp: {mode: uat}
            web: {allowed_origins: ["https://app.example.com", "http://localhost:5173", "http://127.0.0.1:8000"]}
            routes:
              - {name: a, path_prefix: /a, upstream: http://x, auth: none, cors: false}
              - {name: b, path_prefix: /b, upstream: http://x, auth: none}
            """)
        #expect(config.web.allowedOrigins == ["https://app.example.com", "http://localhost:5173", "http://127.0.0.1:8000"])
        #expect(config.routes.map(\.cors) == [false, true])
        #expect(try TestConfig.load("otp: {mode: uat}\n").web.allowedOrigins.isEmpty)
    }

    @Test(arguments: [
        "*", "https://*.example.com", "https://app.example.com/", "https://app.example.com/path", "app.example.com",
        "HTTPS://app.example.com", "https://App.example.com", "ftp://app.example.com", "https://app.example.com:443",
        "http://app.example.com:80", "https://user@app.example.com", "https://app.example.com?x=1", "",
    ])
    func anythingButAnOriginIsRefusedNamingItsIndex(origin: String) throws {
        let error = try #require(throws: ConfigError.self) {
            try TestConfig.load("otp: {mode: uat}\nweb: {allowed_origins: [\"https://ok.example.com\", \"\(origin)\"]}\n")
        }
        #expect(error.key == "web.allowed_origins[1]")
        #expect(error.description.contains("is not an origin"), "\(error)")
    }

    @Test func unknownKeysUnderWebAreRefused() throws {
        let error = try #require(throws: ConfigError.self) {
            try TestConfig.load("otp: {mode: uat}\nweb: {allowed_origin: [\"https://ok.example.com\"]}\n")
        }
        #expect(error.key == "web.allowed_origin")
    }

    @Test func anAllowedOriginGetsItselfBackWithCredentialsAndOthersGetNoAllowField() throws {
        var web = GatewayConfig.Web()
        web.allowedOrigins = ["https://app.example.com"]
        let policy = CORSPolicy(web)
        let real = policy.responseFields(origin: "https://app.example.com")
        #expect(real.map(\.name) == ["Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Expose-Headers", "Vary"])
        #expect(real.map(\.value) == [
            "https://app.example.com", "true", "RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, X-Request-Id", "Origin",
        ])
        let preflight = policy.preflightFields(origin: "https://app.example.com")
        #expect(preflight.map(\.name) == [
            "Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Allow-Methods",
            "Access-Control-Allow-Headers", "Access-Control-Max-Age", "Vary",
        ])
        for origin in ["https://evil.example.com", "https://app.example.com.evil.net", "null", "https://APP.example.com"] {
            #expect(policy.responseFields(origin: origin).map(\.name) == ["Vary"], "\(origin)")
            #expect(policy.preflightFields(origin: origin).map(\.name) == ["Vary"], "\(origin)")
        }
        #expect(policy.responseFields(origin: nil).map(\.name) == ["Vary"])
        #expect(!CORSPolicy(GatewayConfig.Web()).isEnabled)
    }

    @Test func aPreflightIsAnOptionsWithOriginAndRequestMethod() {
        let full = HTTPHeaders([("Origin", "https://a.example"), ("Access-Control-Request-Method", "GET")])
        #expect(CORSPolicy.isPreflight(method: .OPTIONS, has: { full.first(name: $0.description) != nil }))
        #expect(!CORSPolicy.isPreflight(method: .GET, has: { full.first(name: $0.description) != nil }))
        #expect(!CORSPolicy.isPreflight(method: .OPTIONS, has: { HTTPHeaders([("Origin", "https://a.example")]).first(name: $0.description) != nil }))
        #expect(!CORSPolicy.isPreflight(method: .OPTIONS, has: { HTTPHeaders([("Access-Control-Request-Method", "GET")]).first(name: $0.description) != nil }))
    }

    @Test func theRefreshCookieIsReadAndRemovedAmongOthers() {
        let token = String(repeating: "ab", count: 32)
        #expect(RefreshCookie.values(in: ["theme=dark; __Host-pg_refresh=\(token); lang=en"]) == [token])
        #expect(RefreshCookie.values(in: ["theme=dark", "__Host-pg_refresh=\(token)"]) == [token])
        #expect(RefreshCookie.values(in: ["pg_refresh=\(token); xpg_refresh=1; __Host-pg_refreshed=2; __host-pg_refresh=3"]).isEmpty)
        #expect(RefreshCookie.values(in: []).isEmpty)
        #expect(RefreshCookie.removed(from: "theme=dark; __Host-pg_refresh=\(token); lang=en") == "theme=dark; lang=en")
        #expect(RefreshCookie.removed(from: "__Host-pg_refresh=\(token); pg_refresh=\(token)") == nil)
        #expect(RefreshCookie.removed(from: "pg_refreshed=2") == "pg_refreshed=2")
        #expect(RefreshCookie.removed(from: "theme=dark") == "theme=dark")
        #expect(RefreshCookie.setting(token, maxAge: 60) == "__Host-pg_refresh=\(token); Max-Age=60; Path=/; HttpOnly; Secure; SameSite=Strict")
        #expect(RefreshCookie.clearing == "__Host-pg_refresh=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Strict")
    }

    /// An upstream may set its own cookies, never the gateway's: a `Set-Cookie` of the refresh
    /// cookie's name (today's or the one before it, in any case) would shadow or plant the
    /// web session, one of the portal's its member's session. Both protocols take their fields from here (``ProxyResponseHead``).
    @Test func anUpstreamCannotSetTheRefreshCookie() {
        let upstream = UpstreamResponseHead(status: .ok, fields: [
            ("Set-Cookie", "theme=dark; Path=/"), ("Set-Cookie", "\(RefreshCookie.name)=planted; Path=/auth/refresh; Secure"),
            ("set-cookie", "pg_refresh=planted; Path=/auth/refresh"), ("Set-Cookie", " PG_REFRESH =planted"),
            ("Set-Cookie", "__Host-pg_refresh=planted; Path=/; Secure"), ("Set-Cookie", "pg_refreshed=1"),
            ("Set-Cookie", "pg_portal=planted; Path=/portal/v1"), ("Set-Cookie", "Pg_Portal =planted"), ("Content-Length", "0"),
        ])
        let head = ProxyResponseHead(status: .ok, fields: .upstream(upstream, requestID: "r1", adding: [:]), cors: nil)
        let visited = Self.visited(head)
        #expect(visited == ["Set-Cookie: theme=dark; Path=/", "Set-Cookie: pg_refreshed=1", "Content-Length: 0", "X-Request-Id: r1"])
        #expect(Self.http2Fields(head) == Self.lowercasedNames(visited))
    }

    /// A preflight ends the exchange before admission, as a refusal does: nothing after it
    /// (an admission, the request's end, a close) starts anything.
    @Test func aPreflightAnsweredEndsTheExchangeBeforeAdmission() {
        var machine = ProxyExchange.StateMachine(method: .OPTIONS, hasBody: false, maxBodyBytes: 100)
        let answered = machine.preflightAnswered()
        #expect(answered)
        #expect(machine.isFinished)
        let again = machine.preflightAnswered()
        #expect(!again)
        #expect(machine.admitted(declaredLength: nil) == .none)
        #expect(machine.requestPart(.end(nil)) == .none)
        #expect(machine.clientClosed() == .none)
        // Once admitted, a preflight is out of step: refused, and reported as illegal.
        var admitted = ProxyExchange.StateMachine(method: .OPTIONS, hasBody: false, maxBodyBytes: 100, check: .counting)
        _ = admitted.admitted(declaredLength: nil)
        let late = admitted.preflightAnswered()
        #expect(!late)
        #expect(admitted.illegalInputs == 1)
    }

    /// Both protocols take a response's fields from ``ProxyResponseHead``: HTTP/1.1 and
    /// HTTP/2 alike by writing them; the CORS fields come last in both, also on the
    /// gateway's own error answers.
    @Test func bothProtocolsGetTheSameCORSFields() {
        let cors = [(name: "Access-Control-Allow-Origin", value: "https://a.example"), (name: "Vary", value: "Origin")]
        let upstream = ProxyResponseHead(
            status: .ok,
            fields: .upstream(UpstreamResponseHead(status: .ok, fields: [("Access-Control-Allow-Origin", "*"), ("Content-Length", "2")]), requestID: "r1", adding: [:]),
            cors: cors
        )
        let visited = Self.visited(upstream)
        #expect(visited == ["Content-Length: 2", "X-Request-Id: r1", "Access-Control-Allow-Origin: https://a.example", "Vary: Origin"])
        #expect(Self.http2Fields(upstream) == Self.lowercasedNames(visited))
        let refusal = ProxyResponseHead(status: .unauthorized, fields: .gateway(HTTPHeaders([("Content-Type", "application/json")])), cors: cors)
        let refused = Self.visited(refusal)
        #expect(refused == ["Content-Type: application/json", "Access-Control-Allow-Origin: https://a.example", "Vary: Origin"])
        #expect(Self.http2Fields(refusal) == Self.lowercasedNames(refused))
    }

    @Test func theUpstreamsOwnCORSFieldsAreReplacedNotDoubled() {
        let upstream = UpstreamResponseHead(status: .ok, fields: [
            ("Content-Type", "application/json"), ("Access-Control-Allow-Origin", "*"), ("access-control-allow-headers", "X-Custom"),
        ])
        func fields(cors: [(name: String, value: String)]?) -> HTTPHeaders {
            HTTPHeaders(Self.fields(ProxyResponseHead(status: .ok, fields: .upstream(upstream, requestID: "r1", adding: [:]), cors: cors)).map { ($0.name, $0.value) })
        }
        let replaced = fields(cors: [("Access-Control-Allow-Origin", "https://a.example")])
        #expect(replaced["Access-Control-Allow-Origin"] == ["https://a.example"])
        #expect(replaced["Access-Control-Allow-Headers"].isEmpty)
        #expect(replaced["Content-Type"] == ["application/json"])
        // A route that leaves CORS to its upstream passes them as they are.
        let kept = fields(cors: nil)
        #expect(kept["Access-Control-Allow-Origin"] == ["*"])
        #expect(kept["Access-Control-Allow-Headers"] == ["X-Custom"])
    }
}
