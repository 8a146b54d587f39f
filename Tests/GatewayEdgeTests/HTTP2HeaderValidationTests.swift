import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import Testing
import TestSupport

@testable import GatewayEdge

/// The gateway's checks of a client's header blocks (``HTTP2RequestHead``, ``HTTP2FieldRules``)
/// against NIOHTTP2's own header-block validation, which they replace (``HTTP2Limits`` turns it
/// off): for generated request and trailer blocks, both give the same verdict, NIO's taken from
/// a real server-side `NIOHTTP2Handler` fed over the wire, in memory. And the other direction,
/// which the gateway no longer has NIO check: every response block it makes passes NIO's
/// response validation.
@Suite("HTTP/2 header blocks: the gateway's checks agree with NIOHTTP2's")
struct HTTP2HeaderValidationTests {
    static let cases = 1_500

    @Test("request blocks: the same verdict as NIOHTTP2's validation")
    func requestBlocks() throws {
        var random = SeededRandom(seed: 0x4832_5245_51)
        var malformed = 0
        for index in 0..<Self.cases {
            let block = Self.requestBlock(&random)
            let nio = try NIOServer.accepts(request: block)
            let gateway: Bool
            switch HTTP2RequestHead.read(block, endStream: true) {
            case .head, .passOn: gateway = true
            case .malformed: gateway = false
            }
            // NIO's validation takes any method; the gateway only those HTTP/1.1's parser takes.
            let known = block.first(name: ":method").map { method in
                if case .RAW = HTTPMethod(rawValue: method) { return false }
                return true
            } ?? true
            #expect(gateway == (nio && known), "case \(index): \(block.map { "\($0.name): \($0.value)" }) gateway \(gateway), NIO \(nio)")
            if !nio { malformed += 1 }
        }
        // Both verdicts came up often enough to mean something.
        #expect(malformed > Self.cases / 5 && malformed < Self.cases * 4 / 5, "\(malformed) malformed of \(Self.cases)")
    }

    @Test("trailer blocks: the same verdict as NIOHTTP2's validation")
    func trailerBlocks() throws {
        var random = SeededRandom(seed: 0x5452_4149_4C)
        var malformed = 0
        for index in 0..<Self.cases / 3 {
            let block = HPACKHeaders(Self.fields(&random, pseudo: random.chance(20)))
            let nio = try NIOServer.accepts(trailers: block)
            #expect(HTTP2FieldRules.areValidTrailers(block) == nio, "case \(index): \(block.map { "\($0.name): \($0.value)" }) NIO \(nio)")
            if !nio { malformed += 1 }
        }
        #expect(malformed > Self.cases / 15 && malformed < Self.cases * 4 / 15, "\(malformed) malformed of \(Self.cases / 3)")
    }

    @Test("response blocks made from any fields an upstream's HTTP/1 head may carry pass NIOHTTP2's validation")
    func responseBlocks() throws {
        var random = SeededRandom(seed: 0x5245_5350)
        for index in 0..<Self.cases / 3 {
            var fields = HTTPHeaders()
            for _ in 0..<random.below(8) {
                fields.add(name: Self.http1Name(&random), value: Self.http1Value(&random))
            }
            if random.chance(30) { fields.add(name: "Connection", value: "close, \(fields.first?.name ?? "x-a")") }
            let block = HTTP2ResponseBlock.make(status: HTTPResponseStatus(statusCode: 200 + random.below(400)), fields: fields)
            #expect(try NIOServer.acceptsResponse(block), "case \(index): \(block.map { "\($0.name): \($0.value)" })")
        }
    }

    // MARK: Generated blocks

    /// A request block: mostly the usual pseudo-fields in order, sometimes one missing,
    /// repeated, unknown, late or with a bad value, then regular fields from ``fields``.
    static func requestBlock(_ random: inout SeededRandom) -> HPACKHeaders {
        var pseudo: [(String, String)] = []
        let method = random.chance(10) ? "CONNECT" : random.chance(92) ? random.pick(["GET", "POST", "DELETE"]) : random.pick(["G T", "", "BREW"])
        pseudo.append((":method", method))
        if random.chance(90) { pseudo.append((":scheme", random.chance(95) ? random.pick(["https", "http"]) : "ht tp")) }
        if random.chance(90) { pseudo.append((":path", random.chance(90) ? random.pick(["/v1/orders?x=1", "/", "/é"]) : random.pick(["", "/a b", "/\u{7F}"]))) }
        if random.chance(85) { pseudo.append((":authority", random.chance(95) ? random.pick(["api.example.com", "127.0.0.1:8443"]) : "a\tb")) }
        if random.chance(8) { pseudo.append(random.pick([(":path", "/again"), (":status", "200"), (":protocol", "websocket"), (":x", "1"), (":Method", "GET")])) }
        if random.chance(50), pseudo.count > 1 { pseudo.swapAt(random.below(pseudo.count), random.below(pseudo.count)) }
        var fields = fields(&random, pseudo: false)
        if random.chance(6) { fields.insert((":scheme", "https"), at: random.below(fields.count + 1)) }
        return HPACKHeaders(pseudo + fields)
    }

    /// Regular fields, most valid; some with an upper-case or empty name, a connection-specific
    /// name, a `te` other than trailers, a NUL, CR or LF in the value (`pseudo`: sometimes a
    /// pseudo-field among them).
    static func fields(_ random: inout SeededRandom, pseudo: Bool) -> [(String, String)] {
        var fields: [(String, String)] = []
        for _ in 0..<random.below(5) {
            let name: String
            if random.chance(94) {
                name = random.pick(["accept", "x-request-id", "cookie", "authorization", "host", "te", "x-a_b.c~!"])
            } else {
                // Not a name of HPACK's static table in upper case: NIO's encoder sends those by index, lower-cased.
                name = random.pick(["X-Upper", "", "connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "x a", "x:y", "x\u{80}", "é"])
            }
            var value = random.pick(["*/*", "trailers", "a=1; b=2", "Bearer abc.def", "", " padded ", "obs\u{E9}text", "tab\there"])
            if random.chance(3) { value += random.pick(["\0", "\r", "\n", "\r\nx-injected: 1"]) }
            fields.append((name, value))
        }
        if pseudo { fields.insert((random.pick([":path", ":status", ":x"]), "/"), at: random.below(fields.count + 1)) }
        return fields
    }

    /// A field name the HTTP/1 parser takes from an upstream: a token, any case.
    static func http1Name(_ random: inout SeededRandom) -> String {
        random.pick([
            "Content-Type", "X-Request-Id", "set-cookie", "ETag", "Transfer-Encoding", "Connection", "Keep-Alive",
            "Upgrade", "Proxy-Connection", "TE", "Trailer", "X-!#$%&'*+-.^_`|~", "Cache-Control", "X-A",
        ])
    }

    /// A field value the HTTP/1 parser takes: visible ASCII, space, tab, obs-text.
    static func http1Value(_ random: inout SeededRandom) -> String {
        random.pick(["text/plain", "", "a b\tc", "caf\u{E9}", "id=1; Path=/; HttpOnly", "\"etag\"", "x-a"])
    }
}

/// A server-side `NIOHTTP2Handler` with its header-block validation on (content-length
/// checks off: they are not the subject here), fed by a client-side one that checks nothing,
/// over an in-memory wire.
private struct NIOServer {
    let client = EmbeddedChannel()
    let server = EmbeddedChannel()
    /// Errors the server raised: a refused block is one.
    private(set) var errors: [any Error] = []

    init() throws {
        var lax = NIOHTTP2Handler.ConnectionConfiguration()
        lax.headerBlockValidation = .disabled
        lax.contentLengthValidation = .disabled
        var strict = NIOHTTP2Handler.ConnectionConfiguration()
        strict.contentLengthValidation = .disabled
        try client.pipeline.syncOperations.addHandler(NIOHTTP2Handler(mode: .client, connectionConfiguration: lax))
        try server.pipeline.syncOperations.addHandler(NIOHTTP2Handler(mode: .server, connectionConfiguration: strict))
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: 443)
        client.connect(to: address, promise: nil)
        server.connect(to: address, promise: nil)
        try exchange()
    }

    /// Moves bytes both ways until neither side has more; the frames each side read are dropped.
    mutating func exchange() throws {
        var moved = true
        while moved {
            moved = false
            while let bytes = try client.readOutbound(as: ByteBuffer.self) {
                moved = true
                do { try server.writeInbound(bytes) } catch { errors.append(error) }
            }
            while let bytes = try server.readOutbound(as: ByteBuffer.self) {
                moved = true
                try client.writeInbound(bytes)
            }
        }
    }

    /// The HEADERS frames the server passed on for `stream`.
    func headersRead(on stream: HTTP2StreamID) throws -> Int {
        var count = 0
        while let frame = try server.readInbound(as: HTTP2Frame.self) {
            if frame.streamID == stream, case .headers = frame.payload { count += 1 }
        }
        return count
    }

    /// Whether NIO's server takes `block` as a stream's request head.
    static func accepts(request block: HPACKHeaders) throws -> Bool {
        var wire = try NIOServer()
        _ = try wire.headersRead(on: 1)
        wire.client.writeAndFlush(HTTP2Frame(streamID: 1, payload: .headers(.init(headers: block, endStream: true))), promise: nil)
        try wire.exchange()
        return try wire.headersRead(on: 1) == 1 && wire.errors.isEmpty
    }

    /// Whether NIO's server takes `block` as the trailers of a well-formed request.
    static func accepts(trailers block: HPACKHeaders) throws -> Bool {
        var wire = try opened(endStream: false)
        wire.client.writeAndFlush(HTTP2Frame(streamID: 1, payload: .headers(.init(headers: block, endStream: true))), promise: nil)
        try wire.exchange()
        return try wire.headersRead(on: 1) == 2 && wire.errors.isEmpty
    }

    /// Whether NIO's server lets `block` go out as the response to a well-formed request.
    static func acceptsResponse(_ block: HPACKHeaders) throws -> Bool {
        var wire = try opened(endStream: true)
        let written = wire.server.writeAndFlush(HTTP2Frame(streamID: 1, payload: .headers(.init(headers: block, endStream: true))))
        try wire.exchange()
        var accepted = true
        written.whenFailure { _ in accepted = false }
        return accepted
    }

    /// A wire with stream 1 opened by a well-formed request (`endStream`: and ended by it).
    private static func opened(endStream: Bool) throws -> NIOServer {
        var wire = try NIOServer()
        let head = HPACKHeaders([(":method", "POST"), (":scheme", "https"), (":path", "/"), (":authority", "a.example")])
        wire.client.writeAndFlush(HTTP2Frame(streamID: 1, payload: .headers(.init(headers: head, endStream: endStream))), promise: nil)
        try wire.exchange()
        return wire
    }
}
