import Crypto
import Foundation
import Testing
import TestSupport

/// What reaches an upstream and what comes back (the header and routing rules), seen
/// from the echo upstream's own report of each request: real gateway, echo and Redis
/// processes, requests written byte for byte with raw sockets so nothing normalises them.
@Suite("Proxy: routing, headers and bodies passed through", .serialized, .realProcesses)
struct ProxyForwardingTests {
    private static func start(routes: (EchoUpstreamProcess) -> String, extra: String = "") async throws -> (RedisServer, EchoUpstreamProcess, GatewayProcess) {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        let yaml = DriverYAML.make(redis: redis) + extra + "routes:\n" + routes(upstream) + "\n"
        let gateway = try await GatewayProcess(yaml: yaml)
        return (redis, upstream, gateway)
    }

    /// Every request here closes its connection, so a read ends with the answer; the limit only
    /// bounds a broken run, generously for a debug gateway beside the whole parallel suite.
    private static let readTimeout = 30

    /// The request headers the echo upstream received, lowercased names.
    private static func received(_ reply: RawClient.Reply) throws -> [String: [String]] {
        let json = try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any]
        return (json?["headers"] as? [String: [String]]) ?? [:]
    }

    @Test func spoofedIdentityHeadersNeverReachTheUpstream() async throws {
        let (_, upstream, gateway) = try await Self.start { upstream in
            "  - {name: open, path_prefix: /open, upstream: \(upstream.url), auth: none}"
        }
        defer { upstream.stop() }
        let request = [
            "GET /open/who HTTP/1.1", "Host: x", "Connection: close",
            "X-Gateway-User-Id: usr_forged",
            "x-gateway-user-id: usr_forged_lowercase",
            "X-GATEWAY-USER-ID: usr_forged_uppercase",
            "X-Gateway-User-Id: usr_forged_duplicate",
            "X-Gateway-Partner-Id: ptr_forged",
            "X-Gateway-Auth-Channel: otp",
            "X-Gateway-Assertion: forged.assertion.value",
            "X-Gateway-Anything-Else: forged",
            "X-Request-Id: client-trace-7",
            "", "",
        ].joined(separator: "\r\n")
        let reply = try await RawClient.exchange(port: gateway.port, send: request, readTimeout: Self.readTimeout)
        #expect(reply.status == 200, "\(reply.text.prefix(300))")
        let headers = try Self.received(reply)
        let gatewayHeaders = headers.keys.filter { $0.hasPrefix("x-gateway-") }
        #expect(gatewayHeaders.isEmpty, "spoofed headers reached the upstream: \(gatewayHeaders)")
        // A well-formed client request id is kept for tracing (RequestIDMiddleware), once.
        #expect(headers["x-request-id"] == ["client-trace-7"], "\(headers)")
    }

    @Test func hopByHopAndConnectionListedHeadersAreDropped() async throws {
        let (_, upstream, gateway) = try await Self.start { upstream in
            "  - {name: open, path_prefix: /open, upstream: \(upstream.url), auth: none}"
        }
        defer { upstream.stop() }
        let request = [
            "GET /open/hops HTTP/1.1", "Host: gateway.example", "Connection: close", "Connection: X-Foo",
            "X-Foo: must-not-arrive", "Keep-Alive: timeout=5", "Proxy-Authorization: Basic Zm9vOmJhcg==",
            "Upgrade: websocket", "TE: trailers", "Authorization: Bearer not-forwarded-on-this-route",
            "X-Bar: arrives", "X-Forwarded-For: 203.0.113.9",
            "", "",
        ].joined(separator: "\r\n")
        let reply = try await RawClient.exchange(port: gateway.port, send: request, readTimeout: Self.readTimeout)
        #expect(reply.status == 200, "\(reply.text.prefix(300))")
        let headers = try Self.received(reply)
        for dropped in ["x-foo", "keep-alive", "proxy-authorization", "upgrade", "te", "authorization"] {
            #expect(headers[dropped] == nil, "\(dropped) reached the upstream: \(headers)")
        }
        #expect(headers["x-bar"] == ["arrives"])
        // 127.0.0.1 is not a trusted proxy: the client's own X-Forwarded-For is not believed,
        // and the socket peer is what the upstream is told.
        #expect(headers["x-forwarded-for"] == ["127.0.0.1"], "\(headers)")
        #expect(headers["x-forwarded-host"] == ["gateway.example"], "\(headers)")
        #expect(headers["x-forwarded-proto"] == ["http"], "\(headers)")
    }

    @Test func routesMatchOnSegmentBoundariesAndForwardCanonicalPaths() async throws {
        let (_, upstream, gateway) = try await Self.start { upstream in
            """
              - {name: user, path_prefix: /user, upstream: \(upstream.url), auth: none}
              - {name: user-admin, path_prefix: /user/admin, upstream: \(upstream.url)/internal, auth: none, strip_prefix: true}
            """
        }
        defer { upstream.stop() }

        let username = try await DriverHTTP.call(gateway.baseURL + "/username")
        #expect(username.status == 404, "\(username)")
        #expect(username.code == "NOT_FOUND", "\(username)")
        #expect(!upstream.log.contains("/username"))

        let exact = try await DriverHTTP.call(gateway.baseURL + "/user")
        #expect(exact.status == 200)
        #expect(exact.json["path"] as? String == "/user")

        // Unreserved escapes decoded, others kept; the query exactly as sent.
        let encoded = try await DriverHTTP.call(gateway.baseURL + "/user/a%20b/%7Ename?x=1&y=%20z&x=2")
        #expect(encoded.json["path"] as? String == "/user/a%20b/~name", "\(encoded)")
        #expect(encoded.json["query"] as? String == "x=1&y=%20z&x=2", "\(encoded)")

        // Longest prefix wins, and that route strips its prefix onto the upstream's base path.
        let admin = try await DriverHTTP.call(gateway.baseURL + "/user/admin/list?page=2")
        #expect(admin.json["path"] as? String == "/internal/list", "\(admin)")
        #expect(admin.json["query"] as? String == "page=2", "\(admin)")
    }

    @Test func aFiveMebibyteResponseStreamsBackByteIdentical() async throws {
        let (_, upstream, gateway) = try await Self.start { upstream in
            "  - {name: files, path_prefix: /files, upstream: \(upstream.url), auth: none}"
        }
        defer { upstream.stop() }
        let size = 5 * 1_048_576
        var expected = SHA256()
        var left = size
        while left > 0 {
            let count = min(left, StreamPattern.bytes.count)
            expected.update(data: StreamPattern.bytes[0..<count])
            left -= count
        }
        let download = try await RawDownload.get(port: gateway.port, path: "/files/big?stream_bytes=\(size)")
        print("ProxyForwardingTests: 5 MiB response: status \(download.status ?? 0), \(download.body.count) bytes")
        #expect(download.status == 200)
        #expect(download.body.count == size)
        #expect(Data(SHA256.hash(data: download.body)) == Data(expected.finalize()), "the body differs from what the upstream sent")
    }

    @Test func upstreamTrailersReachTheClient() async throws {
        let (_, upstream, gateway) = try await Self.start { upstream in
            "  - {name: files, path_prefix: /files, upstream: \(upstream.url), auth: none}"
        }
        defer { upstream.stop() }
        let reply = try await RawClient.exchange(
            port: gateway.port, send: "GET /files/t?stream_bytes=10&trailer=checksum-abc HTTP/1.1\r\nHost: x\r\nTE: trailers\r\nConnection: close\r\n\r\n", readTimeout: Self.readTimeout
        )
        #expect(reply.status == 200, "\(reply.text)")
        #expect(reply.text.lowercased().contains("transfer-encoding: chunked"), "\(reply.text)")
        #expect(reply.text.lowercased().contains("\r\n0\r\nx-echo-trailer: checksum-abc\r\n"), "\(reply.text)")
    }
}

/// The echo upstream's `stream_bytes` pattern (see `StreamPattern` in Sources/EchoUpstream).
enum StreamPattern {
    static let bytes: [UInt8] = {
        var state: UInt32 = 12_345
        return (0..<65_536).map { _ in
            state = state &* 1_103_515_245 &+ 12_345
            return UInt8(truncatingIfNeeded: state >> 16)
        }
    }()
}

extension ProxyForwardingTests {
    @Test func forwardedForKeepsEarlierHopsOnlyFromTrustedProxies() async throws {
        let (_, upstream, gateway) = try await Self.start(routes: { upstream in
            "  - {name: open, path_prefix: /open, upstream: \(upstream.url), auth: none}"
        }, extra: "trusted_proxies: [127.0.0.1/32]\n")
        defer { upstream.stop() }
        let reply = try await RawClient.exchange(
            port: gateway.port, send: "GET /open/xff HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.9\r\nConnection: close\r\n\r\n", readTimeout: Self.readTimeout
        )
        let headers = try Self.received(reply)
        #expect(headers["x-forwarded-for"] == ["203.0.113.9, 127.0.0.1"], "\(headers)")
    }
}

extension ProxyForwardingTests {
    private static let spoofingRequest = [
        "GET /open/who HTTP/1.1", "Host: x", "Connection: close",
        "Forwarded: for=6.6.6.6;host=admin.internal;proto=https",
        "X-Real-IP: 6.6.6.6",
        "X-Gateway_User-Id: evil",
        "x_gateway_user_id: evil",
        "X_Custom: dropped",
        "", "",
    ].joined(separator: "\r\n")

    @Test func forwardedRealIPAndUnderscoreNamesFromAnUntrustedClientNeverReachTheUpstream() async throws {
        let (_, upstream, gateway) = try await Self.start { upstream in
            "  - {name: open, path_prefix: /open, upstream: \(upstream.url), auth: none}"
        }
        defer { upstream.stop() }
        let reply = try await RawClient.exchange(port: gateway.port, send: Self.spoofingRequest, readTimeout: Self.readTimeout)
        #expect(reply.status == 200, "\(reply.text.prefix(300))")
        let headers = try Self.received(reply)
        #expect(headers["forwarded"] == nil, "\(headers)")
        #expect(headers["x-real-ip"] == ["127.0.0.1"], "the gateway's own view of the client: \(headers)")
        #expect(!headers.keys.contains { $0.contains("_") }, "\(headers)")
        #expect(!headers.keys.contains { $0.hasPrefix("x-gateway") }, "\(headers)")
    }

    @Test func forwardedAndRealIPFromATrustedProxyPassOnButUnderscoreNamesStillDoNot() async throws {
        let (_, upstream, gateway) = try await Self.start(routes: { upstream in
            "  - {name: open, path_prefix: /open, upstream: \(upstream.url), auth: none}"
        }, extra: "trusted_proxies: [127.0.0.1/32]\n")
        defer { upstream.stop() }
        let reply = try await RawClient.exchange(port: gateway.port, send: Self.spoofingRequest, readTimeout: Self.readTimeout)
        #expect(reply.status == 200, "\(reply.text.prefix(300))")
        let headers = try Self.received(reply)
        #expect(headers["forwarded"] == ["for=6.6.6.6;host=admin.internal;proto=https"], "\(headers)")
        #expect(headers["x-real-ip"] == ["6.6.6.6"], "\(headers)")
        #expect(!headers.keys.contains { $0.contains("_") }, "\(headers)")
    }
}

extension ProxyForwardingTests {
    /// A partner's live key authenticates it to the gateway and is then dropped, like
    /// `Authorization`: an upstream (or its logs) never holds it unless its route opts in.
    @Test func partnerKeysReachTheUpstreamOnlyOnRoutesThatForwardThem() async throws {
        let (redis, upstream, gateway) = try await Self.start { upstream in
            """
              - {name: partner, path_prefix: /partner-api, upstream: \(upstream.url), auth: api_key}
              - {name: open, path_prefix: /open, upstream: \(upstream.url), auth: none}
              - {name: legacy, path_prefix: /legacy, upstream: \(upstream.url), auth: api_key, forward_api_key: true}
            """
        }
        defer { upstream.stop() }
        let partnerID = try await DriverAPI.createPartner(gateway, name: "KeyHolder")
        let key = try await DriverAPI.createKey(gateway, partnerID: partnerID)

        let authenticated = try await DriverHTTP.call(gateway.baseURL + "/partner-api/x", headers: [("X-API-Key", key)])
        #expect(authenticated.status == 200, "\(authenticated)")
        #expect(DriverEcho.header(authenticated, "x-api-key") == nil, "the partner's key reached the upstream: \(authenticated)")
        #expect(DriverEcho.single(authenticated, "x-gateway-partner-id") == partnerID, "\(authenticated)")

        let open = try await DriverHTTP.call(gateway.baseURL + "/open/x", headers: [("x-api-key", key)])
        #expect(open.status == 200, "\(open)")
        #expect(DriverEcho.header(open, "x-api-key") == nil, "a key sent to an open route reached its upstream: \(open)")

        let optedIn = try await DriverHTTP.call(gateway.baseURL + "/legacy/x", headers: [("X-API-Key", key)])
        #expect(optedIn.status == 200, "\(optedIn)")
        #expect(DriverEcho.single(optedIn, "x-api-key") == key, "\(optedIn)")
        // The partner's keys live in this Redis, which must outlive the calls.
        withExtendedLifetime(redis) {}
    }
}

extension ProxyForwardingTests {
    /// A route's `request_headers`: the fields it adds replace the client's of their names, the
    /// ones it removes never arrive, and a client's `X-Gateway-*` is still dropped.
    @Test func aRoutesRequestHeadersAreAddedAndRemovedOnTheWayUpstream() async throws {
        let (_, upstream, gateway) = try await Self.start { upstream in
            """
              - name: open
                path_prefix: /open
                upstream: \(upstream.url)
                auth: none
                request_headers: {add: {X-Tenant: blue, X-Env: staging}, remove: [X-Debug, Cookie]}
            """
        }
        defer { upstream.stop() }
        let request = [
            "GET /open/tenant HTTP/1.1", "Host: x", "Connection: close",
            "x-tenant: red", "X-Debug: 1", "cookie: session=abc", "X-Gateway-User-Id: usr_forged", "X-Custom: arrives",
            "", "",
        ].joined(separator: "\r\n")
        let reply = try await RawClient.exchange(port: gateway.port, send: request, readTimeout: Self.readTimeout)
        #expect(reply.status == 200, "\(reply.text.prefix(300))")
        let headers = try Self.received(reply)
        #expect(headers["x-tenant"] == ["blue"], "\(headers)")
        #expect(headers["x-env"] == ["staging"], "\(headers)")
        #expect(headers["x-debug"] == nil, "\(headers)")
        #expect(headers["cookie"] == nil, "\(headers)")
        #expect(headers["x-gateway-user-id"] == nil, "\(headers)")
        #expect(headers["x-custom"] == ["arrives"], "\(headers)")
    }
}
