import NIOHTTP1
@testable import GatewayEdge
import Testing

/// The head rules every request passes on both protocols (``RequestHeadRules``), in memory.
@Suite("Request edge: head rules (in memory)")
struct RequestHeadRulesTests {
    private static func admit(_ fields: [(String, String)], target: String = "/open/a") -> Result<ClientRequestHead, GatewayError> {
        RequestHeadRules.admit(ClientRequestHead(HTTPRequestHead(version: .http1_1, method: .POST, uri: target, headers: HTTPHeaders(fields))))
    }

    @Test(arguments: [
        "content-length", "Content-Length", "keep-alive, content-length", " TRANSFER-ENCODING ", "x-a,host", "te, Host",
    ])
    func aConnectionFieldNamingAFramingOrRoutingFieldIsRefused(connection: String) {
        guard case .failure(let refusal) = Self.admit([("Host", "h"), ("Connection", connection), ("Content-Length", "3")]) else {
            Issue.record("Connection: \(connection) was admitted")
            return
        }
        #expect(refusal.status.code == 400 && refusal.code == "INVALID_REQUEST")
    }

    @Test(arguments: ["keep-alive", "close", "te, trailer, x-hop", "upgrade", "Keep-Alive , X-Custom"])
    func aConnectionFieldNamingOtherFieldsIsAdmitted(connection: String) throws {
        _ = try Self.admit([("Host", "h"), ("Connection", connection)]).get()
    }

    @Test(arguments: ["gzip, chunked", "chunked, chunked", "identity", "deflate"])
    func aTransferCodingOtherThanChunkedIsRefused(coding: String) {
        guard case .failure = Self.admit([("Host", "h"), ("Transfer-Encoding", coding)]) else {
            Issue.record("Transfer-Encoding: \(coding) was admitted")
            return
        }
    }

    @Test func chunkedInAnyCaseIsAdmitted() throws {
        _ = try Self.admit([("Host", "h"), ("Transfer-Encoding", "Chunked")]).get()
    }

    @Test func belowAnAnchoredPrefixTheRestIsMadeCanonicalAlone() throws {
        func admitted(_ target: String, anchor: String? = "/forward") -> String? {
            let head = ClientRequestHead(HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: HTTPHeaders([("Host", "h")])))
            return try? RequestHeadRules.admit(head, anchoredPrefix: anchor).get().target
        }
        // Envoy appends the path it asks about after /forward: its `..` may not climb out.
        #expect(admitted("/forward/../healthz") == nil)
        #expect(admitted("/forward/orders/../../forward/x") == nil)
        #expect(admitted("/forward/../healthz", anchor: nil) == "/healthz", "without an anchor, the whole path is one")
        #expect(admitted("/forward/orders/../user//me?a=%2F") == "/forward/user/me?a=%2F")
        #expect(admitted("/forward/%75ser") == "/forward/user")
        #expect(admitted("/forward/user") == "/forward/user")
        #expect(admitted("/forwarded/../x") == "/x", "only the prefix's own segment anchors")
    }

    /// RFC 9112 §3.2: the host a request is for is plain, or the request is `400`.
    @Test func theHostIsOneAndWellFormed() throws {
        for fields in [[("Host", "a"), ("host", "b")], [], [("Host", "a b")], [("Host", "evil@h")], [("Host", "h/x")]] {
            guard case .failure(let refusal) = Self.admit(fields) else {
                Issue.record("\(fields) was admitted")
                continue
            }
            #expect(refusal.status.code == 400 && refusal.code == "INVALID_REQUEST")
        }
        for host in ["h", "api.example.com:8443", "[::1]:8080", "127.0.0.1", ""] {
            _ = try Self.admit([("Host", host)]).get()
        }
        let http10 = ClientRequestHead(HTTPRequestHead(version: .http1_0, method: .GET, uri: "/", headers: [:]))
        _ = try RequestHeadRules.admit(http10).get()
        let absolute = ClientRequestHead(HTTPRequestHead(version: .http1_1, method: .GET, uri: "http://h/x", headers: [:]))
        #expect(try RequestHeadRules.admit(absolute).get().first("host") == "h")
    }

    @Test func twoCredentialsAreStillRefused() {
        guard case .failure = Self.admit([("Host", "h"), ("X-API-Key", "a"), ("x-api-key", "b")]) else {
            Issue.record("two X-API-Key fields were admitted")
            return
        }
    }

    @Test func aCanonicalTargetKeepsTheFieldsBytesAndAnUpgradeClosesTheConnection() throws {
        let rewritten = try Self.admit([("Host", "h"), ("X-A", "1")], target: "/open/x/../b").get()
        #expect(rewritten.target == "/open/b")
        #expect(rewritten.bytes == ClientRequestHead(HTTPRequestHead(version: .http1_1, method: .POST, uri: "/open/x/../b", headers: ["Host": "h", "X-A": "1"])).bytes)
        let upgrade = try Self.admit([("Host", "h"), ("Connection", "upgrade"), ("Upgrade", "websocket")]).get()
        #expect(upgrade.values("connection") == ["upgrade", "close"])
        #expect(!upgrade.isKeepAlive)
    }
}
