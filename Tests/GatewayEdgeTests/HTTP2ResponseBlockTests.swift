import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import Testing

@testable import GatewayEdge

/// ``HTTP2ResponseBlock``: what a proxied response's header block holds and how HPACK sends it,
/// read back by a peer's decoder.
@Suite("The HTTP/2 header block of a proxied response")
struct HTTP2ResponseBlockTests {
    static let upstreamFields = HTTPHeaders([
        ("Content-Type", "application/json"), ("Server", "nginx"), ("Connection", "keep-alive, x-hop"),
        ("Keep-Alive", "timeout=5"), ("X-Hop", "1"), ("Set-Cookie", "pg_refresh=secret; HttpOnly"),
        ("Content-Length", "11"),
    ])

    @Test("status first, names lower-cased, HTTP/1's connection fields left out")
    func fields() {
        var fields = Self.upstreamFields
        fields.add(name: "X-Request-Id", value: "req-1")
        let block = HTTP2ResponseBlock.make(status: .created, fields: fields)
        #expect(block.map(\.name) == [":status", "content-type", "server", "set-cookie", "content-length", "x-request-id"])
        #expect(block.first?.value == "201")
    }

    @Test("from the fields a client gets, one by one: names lower-cased, connection fields left out")
    func visitedFields() {
        let block = HTTP2ResponseBlock.make(status: .serviceUnavailable) { visit in
            visit("Content-Type", "application/json")
            visit("Connection", "close")
            visit("x-request-id", "req-1")
            visit("Retry-After", "1")
        }
        #expect(block.map(\.name) == [":status", "content-type", "x-request-id", "retry-after"])
        #expect(block.map(\.indexable) == [.indexable, .indexable, .nonIndexable, .nonIndexable])
        #expect(block.first?.value == "503")
    }

    @Test("per-response fields are literals a peer never indexes; cookies are never indexed")
    func indexingOnTheWire() throws {
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        for id in 0..<200 {
            var fields = Self.upstreamFields
            fields.add(name: "X-Request-Id", value: "req-\(id)-\(String(repeating: "f", count: 24))")
            fields.add(name: "RateLimit-Remaining", value: String(10_000 - id))
            var wire = ByteBuffer()
            try encoder.encode(headers: HTTP2ResponseBlock.make(status: .ok, fields: fields), to: &wire)
            let decoded = try decoder.decodeHeaders(from: &wire)
            let indexing = Dictionary(uniqueKeysWithValues: decoded.map { ($0.name, $0.indexable) })
            #expect(indexing["x-request-id"] == .nonIndexable)
            #expect(indexing["ratelimit-remaining"] == .nonIndexable)
            #expect(indexing["content-length"] == .nonIndexable)
            #expect(indexing["set-cookie"] == .neverIndexed)
            #expect(indexing["content-type"] == .indexable)
        }
        // Only the fields that repeat entered the table (`server` and `content-type`; the
        // status and cookie name are in the static table), so it stays small and they keep
        // whole-field indices on every later response.
        #expect(encoder.dynamicTableSize == ("server".utf8.count + "nginx".utf8.count + 32) + ("content-type".utf8.count + "application/json".utf8.count + 32))
    }

    @Test("an endpoint's block, made by NIOHTTP2's codec, gets the same indexing on its stream")
    func endpointStreams() throws {
        let stream = EmbeddedChannel(handler: HTTP2StreamEndMerger())
        defer { _ = try? stream.finish() }
        let block: HPACKHeaders = [":status": "200", "content-type": "application/json", "x-request-id": "req-1", "set-cookie": "a=b"]
        try stream.writeOutbound(HTTP2Frame.FramePayload.headers(.init(headers: block)))
        guard case .headers(let sent) = try stream.readOutbound(as: HTTP2Frame.FramePayload.self) else {
            Issue.record("no HEADERS frame")
            return
        }
        #expect(sent.headers.map(\.name) == [":status", "content-type", "x-request-id", "set-cookie"])
        #expect(sent.headers.map(\.indexable) == [.indexable, .indexable, .nonIndexable, .neverIndexed])
    }
}
