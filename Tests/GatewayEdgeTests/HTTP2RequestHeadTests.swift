import NIOCore
import NIOHPACK
import NIOHTTP1
import Testing

@testable import GatewayEdge

/// ``HTTP2RequestHead``: a stream's header block laid out as the HTTP/1 head the proxy engine
/// reads, byte for byte what the same fields laid out from NIO's head would be.
@Suite("An HTTP/2 request's header block as an HTTP/1 head")
struct HTTP2RequestHeadTests {
    static func block(_ method: String, _ fields: [(String, String)] = []) -> HPACKHeaders {
        HPACKHeaders([(":method", method), (":scheme", "https"), (":path", "/orders?page=2"), (":authority", "api.example.com")] + fields)
    }

    /// What the head must be: the same fields laid out through NIO's head.
    static func expected(_ method: HTTPMethod, _ fields: [(String, String)]) -> ClientRequestHead {
        ClientRequestHead(HTTPRequestHead(version: .http2, method: method, uri: "/orders?page=2", headers: HTTPHeaders(fields)))
    }

    @Test("a GET that ends its stream: Host from :authority, no framing field added")
    func getEndingTheStream() throws {
        let head = try #require(HTTP2RequestHead.make(from: Self.block("GET", [("accept", "*/*")]), endStream: true))
        #expect(head == Self.expected(.GET, [("host", "api.example.com"), ("accept", "*/*")]))
        #expect(String(buffer: head.bytes) == "GET /orders?page=2 HTTP/2.0\r\nhost: api.example.com\r\naccept: */*\r\n\r\n")
        #expect(head.declaredBody == .none && head.version == .http2)
    }

    @Test("a body to follow and no length: Transfer-Encoding chunked, whatever the method")
    func bodyToFollow() throws {
        for method in ["GET", "POST"] {
            let head = try #require(HTTP2RequestHead.make(from: Self.block(method), endStream: false))
            #expect(head == Self.expected(HTTPMethod(rawValue: method), [("host", "api.example.com"), ("transfer-encoding", "chunked")]))
            #expect(head.declaredBody == .chunked)
        }
    }

    @Test("a POST that ends its stream: Content-Length 0; a declared length is kept")
    func lengths() throws {
        let empty = try #require(HTTP2RequestHead.make(from: Self.block("POST"), endStream: true))
        #expect(empty == Self.expected(.POST, [("host", "api.example.com"), ("content-length", "0")]))
        #expect(empty.declaredBody == .none)
        let sized = try #require(HTTP2RequestHead.make(from: Self.block("POST", [("content-length", "12")]), endStream: false))
        #expect(sized == Self.expected(.POST, [("host", "api.example.com"), ("content-length", "12")]))
        #expect(sized.declaredBody == .length(12))
    }

    @Test("cookie fields joined where the first was; a host field kept instead of :authority")
    func cookiesAndHost() throws {
        let block = Self.block("GET", [("cookie", "a=1"), ("host", "h.example"), ("cookie", "b=2"), ("x-one", "1"), ("cookie", "c=3")])
        let head = try #require(HTTP2RequestHead.make(from: block, endStream: true))
        #expect(head == Self.expected(.GET, [("cookie", "a=1; b=2; c=3"), ("host", "h.example"), ("x-one", "1")]))
        #expect(head.first("cookie") == "a=1; b=2; c=3")
    }

    @Test("a pseudo-field missing, repeated or with a space: no head")
    func malformedPseudoFields() {
        #expect(HTTP2RequestHead.make(from: HPACKHeaders([(":method", "GET"), (":path", "/")]), endStream: true) == nil)
        #expect(HTTP2RequestHead.make(from: Self.block("GET", [(":path", "/again")]), endStream: true) == nil)
        #expect(HTTP2RequestHead.make(from: Self.block("G T"), endStream: true) == nil)
    }
}
