import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// The request edge against real gateway, echo-upstream and Redis processes, with requests
/// written byte for byte (HTTP clients would normalise the paths and refuse the rest): each
/// way around the route table and the client protections that was reproduced, now closed.
@Suite("Request edge: paths, credentials and body timeouts (processes)", .serialized, .timingSensitive)
struct RequestEdgeProcessTests {
    private static func start(server: String = "") async throws -> (RedisServer, EchoUpstreamProcess, GatewayProcess) {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        let yaml = DriverYAML.make(redis: redis, extra: server) + """
            routes:
              - {name: open, path_prefix: /user, upstream: \(upstream.url), auth: none}
              - {name: protected, path_prefix: /user/admin, upstream: \(upstream.url), auth: bearer}
              - {name: svc, path_prefix: /svc, upstream: \(upstream.url)/api, auth: none, strip_prefix: true}
              - {name: partner, path_prefix: /papi, upstream: \(upstream.url), auth: api_key}

            """
        let gateway = try await GatewayProcess(yaml: yaml)
        return (redis, upstream, gateway)
    }

    private static func get(_ gateway: GatewayProcess, _ target: String, headers: [String] = []) async throws -> RawClient.Reply {
        let request = (["GET \(target) HTTP/1.1", "Host: x", "Connection: close"] + headers + ["", ""]).joined(separator: "\r\n")
        return try await RawClient.exchange(port: gateway.port, send: request)
    }

    private static func errorCode(_ reply: RawClient.Reply) -> String? {
        let json = try? JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any]
        return (json?["error"] as? [String: Any])?["code"] as? String
    }

    private static func forwardedPath(_ reply: RawClient.Reply) -> String? {
        let json = try? JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any]
        return json?["path"] as? String
    }

    /// No path the upstream received holds a dot segment, an encoded slash or a double slash.
    private static func expectOnlyCanonicalPaths(_ upstream: EchoUpstreamProcess) {
        let paths = upstream.receivedPaths
        #expect(!paths.isEmpty, "the upstream recorded no request")
        for path in paths {
            let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            #expect(!segments.contains(".") && !segments.contains(".."), "dot segment reached the upstream: \(path)")
            #expect(!path.lowercased().contains("%2f") && !path.lowercased().contains("%5c"), "encoded slash reached the upstream: \(path)")
            #expect(!path.contains("//"), "double slash reached the upstream: \(path)")
        }
    }

    @Test func pathTricksCannotReachAProtectedRouteThroughAnOpenOne() async throws {
        let (redis, upstream, gateway) = try await Self.start()
        defer { upstream.stop(); redis.kill() }
        // Each of these used to reach the upstream under the open /user route, unchanged.
        for target in ["/user/x/../admin/list", "/user/%61dmin/list", "/user//admin/list", "/user/./admin/list", "/user/%2E/admin/list"] {
            let reply = try await Self.get(gateway, target)
            #expect(reply.status == 401, "\(target): \(reply.text.prefix(300))")
            #expect(Self.errorCode(reply) == "MISSING_TOKEN", "\(target)")
        }
        // Refused outright: the upstream could read these in more than one way.
        for target in ["/user/a%2Fadmin/list", "/user/a%5cb", "/user\\..\\admin", "/user/%00", "/user/../../etc/passwd", "/user/..;/admin/list"] {
            let reply = try await Self.get(gateway, target)
            #expect(reply.status == 400, "\(target): \(reply.text.prefix(300))")
            #expect(Self.errorCode(reply) == "INVALID_REQUEST", "\(target)")
            #expect(reply.closed)
        }
        // What the open route does forward is the canonical path, the query as sent.
        let open = try await Self.get(gateway, "/user/a/./b//c/../%7Ed?q=/../%2F")
        #expect(open.status == 200, "\(open.text.prefix(300))")
        #expect(Self.forwardedPath(open) == "/user/a/b/~d", "\(open.body)")
        #expect(open.body.contains(#""query":"q=\/..\/%2F""#) || open.body.contains(#""query":"q=/../%2F""#), "\(open.body)")
        #expect(!upstream.receivedPaths.contains { $0.contains("admin") }, "\(upstream.receivedPaths)")
        Self.expectOnlyCanonicalPaths(upstream)
    }

    @Test func stripPrefixCannotLeaveTheUpstreamsBasePath() async throws {
        let (redis, upstream, gateway) = try await Self.start()
        defer { upstream.stop(); redis.kill() }
        // Used to reach the upstream as /api/../internal/secret.
        let escape = try await Self.get(gateway, "/svc/../internal/secret")
        #expect(escape.status == 404, "\(escape.text.prefix(300))")
        #expect(Self.errorCode(escape) == "NOT_FOUND")
        let inside = try await Self.get(gateway, "/svc/a/../b//c")
        #expect(inside.status == 200, "\(inside.text.prefix(300))")
        #expect(Self.forwardedPath(inside) == "/api/b/c", "\(inside.body)")
        #expect(!upstream.receivedPaths.contains { $0.contains("internal") }, "\(upstream.receivedPaths)")
        Self.expectOnlyCanonicalPaths(upstream)
    }

    @Test func twoCredentialsAreRefusedOnEveryRouteKindAndEndpoint() async throws {
        let (redis, upstream, gateway) = try await Self.start()
        defer { upstream.stop(); redis.kill() }
        let pair = try await DriverAPI.login(gateway, phone: "9876500001")
        let partner = try await DriverAPI.createPartner(gateway, name: "Dup")
        let key = try await DriverAPI.createKey(gateway, partnerID: partner)
        let bearer = "Authorization: Bearer \(pair.accessToken)"
        // Each first alone is accepted; the fast path has the token cached from then on.
        #expect(try await Self.get(gateway, "/user/admin/single", headers: [bearer]).status == 200)
        #expect(try await Self.get(gateway, "/papi/single", headers: ["X-API-Key: \(key)"]).status == 200)
        let doubled: [(String, [String])] = [
            ("/user/admin/dup-bearer", [bearer, "Authorization: Bearer junk"]),
            ("/user/admin/dup-bearer-same", [bearer, bearer]),
            ("/papi/dup-key", ["X-API-Key: \(key)", "x-api-key: pgk_live_junk"]),
            ("/user/dup-open", ["Authorization: Bearer a", "authorization: Bearer b"]),
            ("/partner/v1/whoami", ["X-API-Key: \(key)", "X-API-Key: \(key)"]),
        ]
        for (target, headers) in doubled {
            let reply = try await Self.get(gateway, target, headers: headers)
            #expect(reply.status == 400, "\(target): \(reply.text.prefix(300))")
            #expect(Self.errorCode(reply) == "INVALID_REQUEST", "\(target)")
        }
        let logout = try await RawClient.exchange(port: gateway.port, send: [
            "POST /auth/logout HTTP/1.1", "Host: x", "Connection: close", bearer, "Authorization: Bearer junk", "Content-Length: 0", "", "",
        ].joined(separator: "\r\n"))
        #expect(logout.status == 400, "\(logout.text.prefix(300))")
        let admin = try await RawClient.exchange(port: gateway.adminPort, send: [
            "GET /v1/partners HTTP/1.1", "Host: x", "Connection: close",
            "Authorization: Bearer \(GatewayProcess.adminToken)", "Authorization: Bearer \(GatewayProcess.adminToken)", "", "",
        ].joined(separator: "\r\n"))
        #expect(admin.status == 400, "\(admin.text.prefix(300))")
        #expect(Self.errorCode(admin) == "INVALID_REQUEST")
        #expect(!upstream.receivedPaths.contains { $0.contains("dup") }, "\(upstream.receivedPaths)")
        // The session survived: the refused logout did nothing.
        #expect(try await Self.get(gateway, "/user/admin/after", headers: [bearer]).status == 200)
    }

    @Test func aBodyThatNeverArrivesIs408AtTheBodyReadTimeout() async throws {
        let (redis, upstream, gateway) = try await Self.start(server: "server: {body_read_timeout: 1s, idle_timeout: 3s}")
        defer { upstream.stop(); redis.kill() }
        let clock = ContinuousClock()
        for target in ["/auth/otp/verify", "/user/upload"] {
            let started = clock.now
            let reply = try await RawClient.exchange(
                port: gateway.port,
                send: "POST \(target) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{\"ph",
                readTimeout: 15
            )
            let elapsed = clock.now - started
            print("RequestEdgeProcessTests: \(target) with 4 of 10 body bytes: \(reply.status.map(String.init) ?? "no answer") after \(elapsed) (body_read_timeout 1s, idle_timeout 3s)")
            #expect(reply.status == 408, "\(target): \(reply.text.prefix(300))")
            #expect(Self.errorCode(reply) == "REQUEST_TIMEOUT", "\(target)")
            #expect(reply.closed)
            #expect(elapsed >= .milliseconds(900) && elapsed < .milliseconds(2900), "\(target): \(elapsed)")
        }
    }

    @Test func aTrickledBodyCannotHoldTheGatewaysOwnEndpointsButMayFeedAProxiedRoute() async throws {
        let (redis, upstream, gateway) = try await Self.start(server: "server: {body_read_timeout: 1s, idle_timeout: 3s}")
        defer { upstream.stop(); redis.kill() }
        // One byte every 300 ms: every gap is under the timeout, the whole body is not.
        let login = try await RawClient.trickle(port: gateway.port, target: "/auth/otp/verify", bodyBytes: 40, every: .milliseconds(300))
        print("RequestEdgeProcessTests: /auth/otp/verify trickled: \(login.reply.status.map(String.init) ?? "no answer") after \(login.elapsed), \(login.sent) bytes sent")
        #expect(login.reply.status == 408, "\(login.reply.text.prefix(300))")
        #expect(Self.errorCode(login.reply) == "REQUEST_TIMEOUT")
        #expect(login.elapsed < .seconds(3), "\(login.elapsed)")
        #expect(login.sent < 40)

        let upload = try await RawClient.trickle(port: gateway.port, target: "/user/upload", bodyBytes: 8, every: .milliseconds(300))
        #expect(upload.reply.status == 200, "\(upload.reply.text.prefix(300))")
        #expect(upload.reply.body.contains(#""body_bytes":8"#), "\(upload.reply.body)")
        Self.expectOnlyCanonicalPaths(upstream)
    }
}

extension RawClient {
    /// Sends a `POST target` head declaring `bodyBytes`, then the body one byte per `every`
    /// until it is all sent or the server answers; the reply, how long from the head to the
    /// server's close (or the end of the reply), and how many body bytes went out.
    static func trickle(port: Int, target: String, bodyBytes: Int, every: Duration) async throws -> (reply: Reply, elapsed: Duration, sent: Int) {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    let fd = try connectedSocket(port: port, readTimeout: 15)
                    defer { close(fd) }
                    let clock = ContinuousClock()
                    let started = clock.now
                    _ = sendAll(fd, "POST \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: \(bodyBytes)\r\n\r\n")
                    var sent = 0
                    var pending = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    let gap = Int32(every.components.seconds * 1000 + every.components.attoseconds / 1_000_000_000_000_000)
                    while sent < bodyBytes {
                        // Stop as soon as the server says something (its response or its close).
                        if poll(&pending, 1, gap) > 0 { break }
                        guard sendAll(fd, "x") == "sent" else { break }
                        sent += 1
                    }
                    let reply = readUntilClosed(fd)
                    return (reply, clock.now - started, sent)
                })
            }
        }
    }
}
