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
        let head = try Self.head(Self.block("GET", [("accept", "*/*")]), endStream: true)
        #expect(head == Self.expected(.GET, [("host", "api.example.com"), ("accept", "*/*")]))
        #expect(String(buffer: head.bytes) == "GET /orders?page=2 HTTP/2.0\r\nhost: api.example.com\r\naccept: */*\r\n\r\n")
        #expect(head.declaredBody == .none && head.version == .http2)
    }

    @Test("a body to follow and no length: Transfer-Encoding chunked, whatever the method")
    func bodyToFollow() throws {
        for method in ["GET", "POST"] {
            let head = try Self.head(Self.block(method), endStream: false)
            #expect(head == Self.expected(HTTPMethod(rawValue: method), [("host", "api.example.com"), ("transfer-encoding", "chunked")]))
            #expect(head.declaredBody == .chunked)
        }
    }

    @Test("a POST that ends its stream: Content-Length 0; a declared length is kept")
    func lengths() throws {
        let empty = try Self.head(Self.block("POST"), endStream: true)
        #expect(empty == Self.expected(.POST, [("host", "api.example.com"), ("content-length", "0")]))
        #expect(empty.declaredBody == .none)
        let sized = try Self.head(Self.block("POST", [("content-length", "12")]), endStream: false)
        #expect(sized == Self.expected(.POST, [("host", "api.example.com"), ("content-length", "12")]))
        #expect(sized.declaredBody == .length(12))
    }

    @Test("cookie fields joined where the first was; a host field kept instead of :authority")
    func cookiesAndHost() throws {
        let block = Self.block("GET", [("cookie", "a=1"), ("host", "h.example"), ("cookie", "b=2"), ("x-one", "1"), ("cookie", "c=3")])
        let head = try Self.head(block, endStream: true)
        #expect(head == Self.expected(.GET, [("cookie", "a=1; b=2; c=3"), ("host", "h.example"), ("x-one", "1")]))
        #expect(head.first("cookie") == "a=1; b=2; c=3")
    }

    @Test("a pseudo-field missing, repeated, late or with a space, or a field RFC 9113 forbids: malformed")
    func malformed() {
        let blocks: [String: HPACKHeaders] = [
            "no :scheme": HPACKHeaders([(":method", "GET"), (":path", "/")]),
            ":path twice": Self.block("GET", [(":path", "/again")]),
            "a space in :method": Self.block("G T"),
            "a pseudo-field after a regular one": HPACKHeaders([(":method", "GET"), ("accept", "*/*"), (":scheme", "https"), (":path", "/")]),
            "an empty :path": HPACKHeaders([(":method", "GET"), (":scheme", "https"), (":path", "")]),
            ":status in a request": Self.block("GET", [(":status", "200")]),
            "an upper-case name": Self.block("GET", [("Accept", "*/*")]),
            "transfer-encoding": Self.block("POST", [("transfer-encoding", "chunked")]),
            "te other than trailers": Self.block("GET", [("te", "gzip")]),
            "a NUL in a value": Self.block("GET", [("x-a", "a\0b")]),
            "a CONNECT with :path": Self.block("CONNECT"),
        ]
        for (name, block) in blocks {
            guard case .malformed = HTTP2RequestHead.read(block, endStream: true) else {
                Issue.record("\(name): not malformed")
                continue
            }
        }
    }

    @Test("a CONNECT, or a request with no :authority: well-formed, passed on to a child channel")
    func passedOn() {
        let blocks = [
            HPACKHeaders([(":method", "CONNECT"), (":authority", "db.internal:5432")]),
            HPACKHeaders([(":method", "GET"), (":scheme", "https"), (":path", "/"), ("host", "api.example.com"), ("te", "trailers")]),
        ]
        for block in blocks {
            guard case .passOn = HTTP2RequestHead.read(block, endStream: true) else {
                Issue.record("\(block): not passed on")
                continue
            }
        }
    }

    /// The head `block` reads as; fails the test when it is not a head.
    static func head(_ block: HPACKHeaders, endStream: Bool) throws -> ClientRequestHead {
        guard case .head(let head) = HTTP2RequestHead.read(block, endStream: endStream) else {
            throw HeadMissing()
        }
        return head
    }

    struct HeadMissing: Error {}
}
