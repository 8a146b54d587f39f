import GatewayAdmission
import GatewayPrimitives
import Logging
import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP1
@testable import GatewayEdge
@testable import GatewayProxy
import TestSupport
import Testing

/// The bytes an upstream connection is sent for a proxied request, in memory: the head the
/// header rules make (``ProxyEngine/upstreamHead(for:identity:client:trace:allocator:)``), written
/// by ``UpstreamResponseHandler`` on an `EmbeddedChannel` with the pipeline an upstream
/// connection gets, then the body in its framing. Compared byte for byte.
@Suite("Proxy: the bytes an upstream is sent (in memory)")
struct UpstreamRequestBytesTests {
    private static let routes: RouteTable = {
        let config = try! TestConfig.load(TestConfig.yaml(redisURL: "redis://127.0.0.1:1/0", extra: """
            routes:
              - {name: orders, path_prefix: /orders, upstream: "http://10.0.0.7:8080/api", auth: bearer, strip_prefix: true}
              - {name: open, path_prefix: /open, upstream: "http://10.0.0.8:9000", auth: none}
              - name: tenant
                path_prefix: /tenant
                upstream: "http://10.0.0.9:80"
                auth: none
                websocket: true
                request_headers: {add: {X-Tenant: blue, X-Env: staging}, remove: [X-Debug, Cookie]}
            """))
        return try! RouteTable(config.routes, clientScheme: "https", logger: Logger(label: "test"))
    }()

    private static let driver = ProxyIdentity(userID: "u-1", partnerID: "p-1", channel: "sdk", assertion: "a.b.c")
    private static let direct = ClientAddress.Forwarding(forwardedFor: "192.0.2.1", fromTrustedProxy: false, peerIP: "192.0.2.1")
    /// The fields the gateway sets for a request from ``direct`` with `Host: h`.
    private static let gatewayFields =
        "X-Request-Id: req-1\r\nX-Forwarded-For: 192.0.2.1\r\nX-Real-IP: 192.0.2.1\r\nX-Forwarded-Proto: https\r\nX-Forwarded-Host: h\r\n"

    private static func request(
        _ method: HTTPMethod, _ uri: String, _ fields: [(String, String)], body: ProxyEngine.Request.Body = .none
    ) -> ProxyEngine.Request {
        let path = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        return ProxyEngine.Request(
            route: routes.match(path[0])!, head: ClientRequestHead(HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: HTTPHeaders(fields))),
            path: path[0], query: path.count > 1 ? path[1] : nil, requestID: "req-1", peerIP: "192.0.2.1", clientIP: "192.0.2.1",
            body: body
        )
    }

    /// An upstream connection's pipeline on an embedded channel, and its handler.
    private static func connection() throws -> (EmbeddedChannel, UpstreamResponseHandler) {
        let channel = EmbeddedChannel()
        try UpstreamResponseHandler.addHandlers(to: channel)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (channel, try channel.pipeline.syncOperations.handler(type: UpstreamResponseHandler.self))
    }

    /// Everything written to the socket so far, as text.
    private static func written(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return text
    }

    private static func send(
        _ request: ProxyEngine.Request, identity: ProxyIdentity = driver, client: ClientAddress.Forwarding = direct,
        trace: [(name: String, value: String)]? = nil, on handler: UpstreamResponseHandler, channel: EmbeddedChannel
    ) throws -> ConnectionTimeoutTests.RecordingSink {
        let sink = ConnectionTimeoutTests.RecordingSink()
        let head = ProxyEngine.upstreamHead(for: request, identity: identity, client: client, trace: trace, allocator: channel.allocator)
        try handler.send(head, to: sink, timeout: .seconds(5))
        return sink
    }

    @Test func aGetIsOneHeadWithTheHeaderRulesApplied() throws {
        let (channel, handler) = try Self.connection()
        let request = Self.request(.GET, "/orders/list?page=2", [
            ("Host", "api.example.com"), ("Accept", "application/json"), ("Authorization", "Bearer secret-token"),
            ("Connection", "keep-alive, X-Drop-Me"), ("X-Drop-Me", "1"), ("Keep-Alive", "timeout=5"), ("TE", "trailers"),
            ("X-Gateway-User-Id", "forged"), ("X_Gateway_User_Id", "forged"), ("Forwarded", "for=6.6.6.6"), ("X-Real-IP", "6.6.6.6"),
            ("X-Forwarded-For", "6.6.6.6"), ("X-Request-Id", "client-id"), ("Expect", "100-continue"), ("X-Custom", "kept"),
            ("Proxy", "http://evil.example:8080"),
        ])
        _ = try Self.send(request, on: handler, channel: channel)
        #expect(try Self.written(channel) == """
            GET /api/list?page=2 HTTP/1.1\r
            Host: 10.0.0.7:8080\r
            Accept: application/json\r
            X-Custom: kept\r
            X-Gateway-User-Id: u-1\r
            X-Gateway-Auth-Channel: sdk\r
            X-Gateway-Partner-Id: p-1\r
            X-Gateway-Assertion: a.b.c\r
            X-Request-Id: req-1\r
            X-Forwarded-For: 192.0.2.1\r
            X-Real-IP: 192.0.2.1\r
            X-Forwarded-Proto: https\r
            X-Forwarded-Host: api.example.com\r
            \r

            """)
    }

    /// `head` as the engine takes it: through the edge rules, then as a request on its route.
    private static func request(_ head: ClientRequestHead) throws -> ProxyEngine.Request {
        let admitted = try RequestHeadRules.admit(head).get()
        let path = admitted.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        return ProxyEngine.Request(
            route: routes.match(path[0])!, head: admitted, path: path[0], query: path.count > 1 ? path[1] : nil, requestID: "req-1",
            peerIP: "192.0.2.1", clientIP: "192.0.2.1", body: admitted.declaredBody
        )
    }

    /// What an upstream is sent for `request` with the body `hi`, as text.
    private static func forwarded(_ request: ProxyEngine.Request) throws -> String {
        let (channel, handler) = try connection()
        _ = try send(request, on: handler, channel: channel)
        handler.sendBody(ByteBuffer(string: "hi"))
        handler.sendEnd()
        return try written(channel)
    }

    @Test func anHTTP1ClientsFieldLinesGoAsTheyCameAndAsAnHTTP2StreamsWould() throws {
        let fields: [(String, String)] = [
            ("hOsT", "api.example.com"), ("ACCEPT", "application/json"), ("x-custom", "one"), ("X-CUSTOM", "two"),
            ("Connection", "keep-alive, X-Drop-Me"), ("x-drop-me", "1"), ("X_Forwarded_For", "6.6.6.6"), ("x_custom", "3"),
            ("X-Gateway-User-Id", "forged"), ("x-GATEWAY-partner-id", "forged"), ("AUTHORIZATION", "Bearer secret"),
            ("Cookie", "a=1"), ("X-Request-Id", "client-id"), ("Content-Length", "2"),
        ]
        // Each line as an HTTP/1.1 client may write it: odd casing, no space after the colon,
        // white space after the value.
        var wire = ByteBuffer(string: "POST /orders/list?page=2 HTTP/1.1\r\n")
        for (index, (name, value)) in fields.enumerated() {
            wire.writeString(index % 2 == 0 ? "\(name):\(value) \t\r\n" : "\(name): \(value)\r\n")
        }
        wire.writeString("\r\nhi")
        var parser = HTTP1RequestParser(maxHeadBytes: 4096)
        guard case .head(let parsed)? = try parser.next(&wire) else {
            Issue.record("no head")
            return
        }
        let http1 = try Self.forwarded(Self.request(parsed))
        #expect(http1 == """
            POST /api/list?page=2 HTTP/1.1\r
            Host: 10.0.0.7:8080\r
            ACCEPT: application/json\r
            x-custom:one \t\r
            X-CUSTOM: two\r
            Cookie: a=1\r
            X-Gateway-User-Id: u-1\r
            X-Gateway-Auth-Channel: sdk\r
            X-Gateway-Partner-Id: p-1\r
            X-Gateway-Assertion: a.b.c\r
            X-Request-Id: req-1\r
            X-Forwarded-For: 192.0.2.1\r
            X-Real-IP: 192.0.2.1\r
            X-Forwarded-Proto: https\r
            X-Forwarded-Host: api.example.com\r
            Content-Length: 2\r
            \r
            hi
            """)
        // The same request as an HTTP/2 stream: names lowercase (HPACK), no white space kept.
        var block = HPACKHeaders([(":method", "POST"), (":path", "/orders/list?page=2"), (":scheme", "https"), (":authority", "api.example.com")])
        for (name, value) in fields where !HeaderName.isHopByHop(name) && !["x-drop-me", "host"].contains(name.lowercased()) {
            block.add(name: name.lowercased(), value: value)
        }
        guard case .head(let stream) = HTTP2RequestHead.read(block, endStream: false) else {
            Issue.record("the stream's block is not a request head")
            return
        }
        let http2 = try Self.forwarded(Self.request(stream))
        let fromHTTP1 = http1.replacingOccurrences(of: " \t\r", with: "\r").replacingOccurrences(of: ":one", with: ": one")
        #expect(Self.lowercasedNames(http2) == Self.lowercasedNames(fromHTTP1))
    }

    /// A head's text with each field name lowercased (HTTP/2 sends them so).
    private static func lowercasedNames(_ head: String) -> [String] {
        head.components(separatedBy: "\r\n").map { line in
            guard let colon = line.firstIndex(of: ":"), !line.hasPrefix("POST ") else { return line }
            return line[..<colon].lowercased() + line[colon...]
        }
    }

    @Test func aTrustedProxysForwardingFieldsPassAndTheTargetIsKeptWhenTheRouteDoesNotRewriteIt() throws {
        let (channel, handler) = try Self.connection()
        let request = Self.request(.DELETE, "/open/item/7?x=1", [
            ("Host", "h"), ("Forwarded", "for=198.51.100.9"), ("X-Real-IP", "198.51.100.9"), ("X-Forwarded-Port", "443"),
        ])
        let proxy = ClientAddress.Forwarding(forwardedFor: "198.51.100.9, 10.1.1.1", fromTrustedProxy: true, peerIP: "10.1.1.1")
        _ = try Self.send(request, identity: .anonymous, client: proxy, on: handler, channel: channel)
        #expect(try Self.written(channel) == """
            DELETE /open/item/7?x=1 HTTP/1.1\r
            Host: 10.0.0.8:9000\r
            Forwarded: for=198.51.100.9\r
            X-Real-IP: 198.51.100.9\r
            X-Forwarded-Port: 443\r
            X-Request-Id: req-1\r
            X-Forwarded-For: 198.51.100.9, 10.1.1.1\r
            X-Forwarded-Proto: https\r
            X-Forwarded-Host: h\r
            \r

            """)
    }

    /// Frameworks take `X-Forwarded-Port`, `-Ssl` and `-Scheme` for how the client connected
    /// (secure cookies, redirects): only a trusted proxy tells that.
    @Test func anUntrustedClientsOtherForwardingFieldsAreDropped() throws {
        let (channel, handler) = try Self.connection()
        let request = Self.request(.GET, "/open/x", [
            ("Host", "h"), ("X-Forwarded-Port", "443"), ("x-forwarded-ssl", "on"), ("X-Forwarded-Scheme", "https"), ("X-Forwarded-Uri", "/admin"),
        ])
        _ = try Self.send(request, identity: .anonymous, on: handler, channel: channel)
        #expect(try Self.written(channel) == "GET /open/x HTTP/1.1\r\nHost: 10.0.0.8:9000\r\n" + Self.gatewayFields + "\r\n")
    }

    /// Fields frameworks read as the path, the method or the signed-in user: a client's would
    /// re-route the request or name a user behind the gateway's back. Dropped unless the route
    /// lists them in `forward_headers`.
    @Test func routingOverrideAndIdentityShapedFieldsGoOnlyWhereTheRouteForwardsThem() throws {
        let shaped = [
            ("X-Original-URL", "/admin"), ("X-Rewrite-URL", "/admin"), ("x-forwarded-prefix", "/evil"),
            ("X-HTTP-Method-Override", "DELETE"), ("X-Method-Override", "DELETE"), ("X-Forwarded-User", "root"),
            ("X-Forwarded-Email", "root@example.com"), ("X-Remote-User", "root"), ("X-Custom", "kept"),
        ]
        let (channel, handler) = try Self.connection()
        _ = try Self.send(Self.request(.GET, "/open/x", [("Host", "h")] + shaped), identity: .anonymous, on: handler, channel: channel)
        #expect(try Self.written(channel) == "GET /open/x HTTP/1.1\r\nHost: 10.0.0.8:9000\r\nX-Custom: kept\r\n\(Self.gatewayFields)\r\n")

        let config = try TestConfig.load(TestConfig.yaml(redisURL: "redis://127.0.0.1:1/0", extra: """
            routes:
              - {name: mounted, path_prefix: /mounted, upstream: "http://10.0.0.9:80", auth: none, forward_headers: [X-Forwarded-Prefix]}
            """))
        let routes = try RouteTable(config.routes, clientScheme: "https", logger: Logger(label: "test"))
        let request = ProxyEngine.Request(
            route: routes.match("/mounted/x")!, head: ClientRequestHead(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/mounted/x", headers: HTTPHeaders([("Host", "h")] + shaped))),
            path: "/mounted/x", query: nil, requestID: "req-1", peerIP: "192.0.2.1", clientIP: "192.0.2.1", body: .none
        )
        let (second, secondHandler) = try Self.connection()
        _ = try Self.send(request, identity: .anonymous, on: secondHandler, channel: second)
        #expect(try Self.written(second) == "GET /mounted/x HTTP/1.1\r\nHost: 10.0.0.9:80\r\nx-forwarded-prefix: /evil\r\nX-Custom: kept\r\n\(Self.gatewayFields)\r\n")
    }

    /// A route's `request_headers`: its `add` fields replace the client's of their names (in
    /// any case) and go after the gateway's header rules, before its identity fields, so they
    /// can never stand in for one; its `remove` names are dropped. A WebSocket handshake's head
    /// is the same one, with the upgrade asked for after it.
    @Test func aRoutesRequestHeadersAreAddedAndRemovedBeforeTheIdentityFields() throws {
        let fields = [
            ("Host", "h"), ("x-tenant", "red"), ("X-Debug", "1"), ("Accept", "*/*"), ("cookie", "a=b"), ("X-ENV", "prod"),
            ("X-Gateway-User-Id", "forged"), ("X-Custom", "kept"),
        ]
        let (channel, handler) = try Self.connection()
        _ = try Self.send(Self.request(.GET, "/tenant/x", fields), on: handler, channel: channel)
        #expect(try Self.written(channel) == """
            GET /tenant/x HTTP/1.1\r
            Host: 10.0.0.9:80\r
            Accept: */*\r
            X-Custom: kept\r
            X-Tenant: blue\r
            X-Env: staging\r
            X-Gateway-User-Id: u-1\r
            X-Gateway-Auth-Channel: sdk\r
            X-Gateway-Partner-Id: p-1\r
            X-Gateway-Assertion: a.b.c\r
            \(Self.gatewayFields)\
            \r

            """)

        let handshake = ProxyEngine.Request(
            route: Self.routes.match("/tenant/ws")!,
            head: ClientRequestHead(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/tenant/ws", headers: HTTPHeaders(fields + [("Connection", "Upgrade"), ("Upgrade", "websocket")]))),
            path: "/tenant/ws", query: nil, requestID: "req-1", peerIP: "192.0.2.1", clientIP: "192.0.2.1", body: .none, handshake: .websocket
        )
        let (upgrading, upgradingHandler) = try Self.connection()
        _ = try Self.send(handshake, identity: .anonymous, on: upgradingHandler, channel: upgrading)
        #expect(try Self.written(upgrading) == """
            GET /tenant/ws HTTP/1.1\r
            Host: 10.0.0.9:80\r
            Accept: */*\r
            X-Custom: kept\r
            X-Tenant: blue\r
            X-Env: staging\r
            \(Self.gatewayFields)\
            Connection: Upgrade\r
            Upgrade: websocket\r
            \r

            """)
    }

    @Test func aBodyWithALengthGoesAsItCameAfterTheHead() throws {
        let (channel, handler) = try Self.connection()
        let request = Self.request(.POST, "/open/upload", [("Host", "h"), ("Content-Length", "5")], body: .length(5))
        _ = try Self.send(request, identity: .anonymous, on: handler, channel: channel)
        handler.sendBody(ByteBuffer(string: "he"))
        handler.sendBody(ByteBuffer(string: "llo"))
        handler.sendEnd()
        #expect(try Self.written(channel) == """
            POST /open/upload HTTP/1.1\r
            Host: 10.0.0.8:9000\r
            \(Self.gatewayFields)\
            Content-Length: 5\r
            \r
            hello
            """)
        #expect(handler.requestEnded)
    }

    /// The framing is the gateway's, from the measured body: `Connection` cannot remove the
    /// length (the upstream would read the body as a request of its own), and two equal
    /// lengths go as one.
    @Test func theLengthIsTheGatewaysWhateverTheClientsFieldsSay() throws {
        let smuggled = "GET /user/profile HTTP/1.1\r\nHost: up\r\nX-Gateway-User-Id: usr_victim\r\nContent-Length: 0\r\n\r\n"
        for fields in [
            [("Host", "h"), ("Connection", "content-length"), ("Content-Length", "\(smuggled.utf8.count)")],
            [("Host", "h"), ("Content-Length", "\(smuggled.utf8.count)"), ("Content-Length", "\(smuggled.utf8.count)")],
            [("Host", "h"), ("Connection", "Content-Length, keep-alive"), ("content-length", "\(smuggled.utf8.count)")],
        ] {
            let (channel, handler) = try Self.connection()
            let request = Self.request(.POST, "/open/a", fields, body: .length(smuggled.utf8.count))
            _ = try Self.send(request, identity: .anonymous, on: handler, channel: channel)
            handler.sendBody(ByteBuffer(string: smuggled))
            handler.sendEnd()
            let text = try Self.written(channel)
            #expect(text == "POST /open/a HTTP/1.1\r\nHost: 10.0.0.8:9000\r\n\(Self.gatewayFields)Content-Length: \(smuggled.utf8.count)\r\n\r\n\(smuggled)", "\(fields)")
        }
    }

    @Test func aChunkedBodyIsReChunkedAsItIsReadAndEndedWithTheLastChunk() throws {
        let (channel, handler) = try Self.connection()
        let request = Self.request(.PUT, "/open/file", [("Host", "h"), ("Transfer-Encoding", "chunked")], body: .chunked)
        _ = try Self.send(request, identity: .anonymous, on: handler, channel: channel)
        handler.sendBody(ByteBuffer(string: String(repeating: "x", count: 26)))
        handler.sendBody(ByteBuffer())
        handler.sendBody(ByteBuffer(string: "end"))
        #expect(!handler.requestEnded)
        handler.sendEnd()
        #expect(try Self.written(channel) == """
            PUT /open/file HTTP/1.1\r
            Host: 10.0.0.8:9000\r
            \(Self.gatewayFields)\
            Transfer-Encoding: chunked\r
            \r
            1a\r
            xxxxxxxxxxxxxxxxxxxxxxxxxx\r
            3\r
            end\r
            0\r
            \r

            """)
        #expect(handler.requestEnded)
    }

    @Test func aPostWithoutABodyGoesWithALengthOfZeroAndEndsWithItsHead() throws {
        let (channel, handler) = try Self.connection()
        _ = try Self.send(Self.request(.POST, "/open/ping", [("Host", "h")]), identity: .anonymous, on: handler, channel: channel)
        #expect(try Self.written(channel).hasSuffix("X-Forwarded-Host: h\r\nContent-Length: 0\r\n\r\n"))
        #expect(handler.requestEnded)

        let (declared, declaredHandler) = try Self.connection()
        let zero = Self.request(.POST, "/open/ping", [("Host", "h"), ("Content-Length", "0")])
        _ = try Self.send(zero, identity: .anonymous, on: declaredHandler, channel: declared)
        let text = try Self.written(declared)
        #expect(text.hasSuffix("X-Forwarded-Host: h\r\nContent-Length: 0\r\n\r\n") && !text.contains("Transfer-Encoding"), "\(text)")
    }

    @Test func theGatewaysTraceContextReplacesTheCallersAtTheEnd() throws {
        let (channel, handler) = try Self.connection()
        let request = Self.request(.GET, "/open/t", [
            ("traceparent", "00-11111111111111111111111111111111-2222222222222222-01"), ("Host", "h"), ("tracestate", "vendor=1"),
        ])
        let trace = [
            (name: "traceparent", value: "00-11111111111111111111111111111111-3333333333333333-01"), (name: "tracestate", value: "vendor=1"),
        ]
        _ = try Self.send(request, identity: .anonymous, trace: trace, on: handler, channel: channel)
        #expect(try Self.written(channel) == """
            GET /open/t HTTP/1.1\r
            Host: 10.0.0.8:9000\r
            \(Self.gatewayFields)\
            traceparent: 00-11111111111111111111111111111111-3333333333333333-01\r
            tracestate: vendor=1\r
            \r

            """)

        // Without a context of the gateway's, the caller's passes where it was.
        let (passing, passingHandler) = try Self.connection()
        _ = try Self.send(request, identity: .anonymous, on: passingHandler, channel: passing)
        #expect(try Self.written(passing).hasPrefix(
            "GET /open/t HTTP/1.1\r\nHost: 10.0.0.8:9000\r\ntraceparent: 00-11111111111111111111111111111111-2222222222222222-01\r\ntracestate: vendor=1\r\n"
        ))
    }

    @Test func theResponseToAHeadHasNoBodyWhateverItsLengthAndTheConnectionCarriesTheNextRequest() throws {
        let (channel, handler) = try Self.connection()
        let head = try Self.send(Self.request(.HEAD, "/open/f", [("Host", "h")]), identity: .anonymous, on: handler, channel: channel)
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"))
        #expect(head.parts.count == 2, "\(head.parts)")
        guard case .end = head.parts.last else {
            Issue.record("the HEAD response did not end at its head: \(head.parts)")
            return
        }
        #expect(handler.isReusable)

        let get = try Self.send(Self.request(.GET, "/open/f", [("Host", "h")]), identity: .anonymous, on: handler, channel: channel)
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        #expect(get.parts.count == 3, "\(get.parts)")
        guard case .body(let body) = get.parts[1] else {
            Issue.record("the GET response had no body: \(get.parts)")
            return
        }
        #expect(String(buffer: body) == "ok")
        #expect(get.failure == nil && head.failure == nil)
    }
}
