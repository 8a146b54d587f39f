// libFuzzer target: the gateway's HTTP/1 response parser (Sources/GatewayEdge/HTTP1/HTTP1ResponseParser.swift)
// against llhttp in response mode, run as NIO's HTTPResponseDecoder runs it. Compiled by
// Fuzz/build.sh into the module GatewayEdge with that module's files.
//
// The first byte of an input says how the rest arrives (pieces of 1 to 16 bytes), the second
// which responses answer a `HEAD` (bit i for the responses i, i + 8, ...: they have no body);
// the rest is what the upstream sent, then the connection closes. Whatever it is, the parser
// must not crash, must read it the same however it arrives, and wherever both parsers accept,
// every response both read whole must be the same response (status, version, fields, body,
// trailers), in the same number: an upstream's bytes framed two ways is what response
// splitting and smuggling need.
//
// llhttp is driven through CNIOLLHTTP directly (an EmbeddedChannel crashes in fuzzer links),
// with what NIO's decoder adds in its callbacks: no lenient flags, a version other than 1.x
// refused, no body after `HEAD`, `1xx`, `204` or `304`, interim responses dropped. Where the
// two differ on purpose (docs/DECISIONS.md, "The gateway's own HTTP/1 response parser"), the
// harness follows the gateway: it stops reading at a `101`, as the gateway does whatever the
// `101`'s fields (llhttp reads on after one without `Upgrade`).

import CNIOLLHTTP
import NIOCore
import NIOHTTP1

@_cdecl("LLVMFuzzerTestOneInput")
public func http1ResponseFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 1 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data + 2, count: size - 2))
    let heads = data[1]
    let whole = FuzzedResponses.gateway(input, heads: heads, piece: max(input.count, 1))
    let pieces = FuzzedResponses.gateway(input, heads: heads, piece: Int(data[0] % 16) + 1)
    precondition(whole == pieces, "read differently in pieces of \(data[0] % 16 + 1): \(whole) against \(pieces)")
    let llhttp = FuzzedResponses.llhttp(input, heads: heads)
    let both = min(whole.responses.count, llhttp.responses.count)
    precondition(Array(whole.responses.prefix(both)) == Array(llhttp.responses.prefix(both)),
                 "read differently from llhttp: \(whole) against \(llhttp)")
    if !whole.failed, !llhttp.failed {
        precondition(whole.responses.count == llhttp.responses.count, "a different number of responses: \(whole) against \(llhttp)")
    }
    return 0
}

/// The responses a parser read whole from an upstream connection's bytes, and whether it refused them.
struct FuzzedResponses: Equatable, CustomStringConvertible {
    struct Response: Equatable {
        var head: String
        var fields: [String]
        var body: [UInt8] = []
        var trailers: [String] = []
    }

    var responses: [Response] = []
    var failed = false
    private var current: Response?

    init() {}

    var description: String {
        "\(failed ? "refused" : "accepted") after \(responses.map { "\($0.head) \($0.fields) body \($0.body.count) trailers \($0.trailers)" })"
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.responses == rhs.responses && lhs.failed == rhs.failed
    }

    /// The method of the request the `index`th response answers.
    static func method(_ index: Int, heads: UInt8) -> HTTPMethod {
        heads & (1 << (index % 8)) != 0 ? .HEAD : .GET
    }

    fileprivate mutating func add(_ part: UpstreamResponsePart) {
        switch part {
        case .head(let head):
            let response = Response(head: "\(head.status.code) \(head.version)", fields: head.headers.map { LLHTTPRun.field($0.name, $0.value) })
            // A `101` is whole at its head: nothing after it is HTTP.
            if head.framing == .switched { responses.append(response) } else { current = response }
        case .body(let chunk):
            current?.body += chunk.readableBytesView
        case .end(let trailers):
            guard var response = current else { return }
            response.trailers = trailers.map { $0.map { LLHTTPRun.field($0.name, $0.value) } } ?? []
            responses.append(response)
            current = nil
        }
    }

    static func gateway(_ input: [UInt8], heads: UInt8, piece: Int) -> FuzzedResponses {
        var parser = HTTP1ResponseParser()
        var result = FuzzedResponses()
        var buffer = ByteBuffer()
        var answered = 0
        parser.expectResponse(to: method(0, heads: heads))
        func add(_ part: UpstreamResponsePart) {
            result.add(part)
            if case .end = part {
                answered += 1
                parser.expectResponse(to: method(answered, heads: heads))
            }
        }
        do {
            for start in stride(from: 0, to: input.count, by: piece) {
                buffer.writeBytes(input[start..<min(start + piece, input.count)])
                while let part = try parser.next(&buffer) { add(part) }
            }
            if let end = try parser.inputEnded(unread: buffer) { add(end) }
        } catch {
            result.failed = true
        }
        return result
    }

    /// The responses llhttp reads, run as NIO's `HTTPResponseDecoder` runs it, through its C
    /// interface: its own callbacks build them.
    static func llhttp(_ input: [UInt8], heads: UInt8) -> FuzzedResponses {
        let run = LLHTTPResponseRun(heads: heads)
        var settings = llhttp_settings_t()
        c_nio_llhttp_settings_init(&settings)
        LLHTTPRun.readFields(&settings)
        settings.on_headers_complete = { parser in
            let run = LLHTTPResponseRun.of(parser)
            run.endField()
            let fields = run.fields
            run.fields = []
            // NIO's decoder refuses a version other than 1.x.
            guard parser!.pointee.http_major == 1 else { return -1 }
            let status = Int(parser!.pointee.status_code)
            let head = "\(status) \(HTTPVersion(major: Int(parser!.pointee.http_major), minor: Int(parser!.pointee.http_minor)))"
            if (100..<200).contains(status), status != 101 {
                // Dropped, and no body: the final response follows.
                run.informational = true
                return 1
            }
            run.informational = false
            let method = FuzzedResponses.method(run.answered, heads: run.heads)
            run.answered += 1
            if status == 101 {
                run.result.responses.append(Response(head: head, fields: fields))
                run.switched = true
                return 1
            }
            run.current = Response(head: head, fields: fields)
            return method == .HEAD || status == 204 || status == 304 ? 1 : 0
        }
        settings.on_body = { parser, bytes, count in
            LLHTTPResponseRun.of(parser).current?.body += UnsafeRawBufferPointer(start: bytes, count: count)
            return 0
        }
        settings.on_message_complete = { parser in
            let run = LLHTTPResponseRun.of(parser)
            run.endField()
            // NIO's workaround for llhttp's issue 202.
            parser!.pointee.content_length = 0
            if run.switched { return Int32(HPE_PAUSED.rawValue) }
            if !run.informational, var response = run.current {
                response.trailers = run.fields
                run.result.responses.append(response)
            }
            run.current = nil
            run.fields = []
            return 0
        }
        var parser = llhttp_t()
        c_nio_llhttp_init(&parser, HTTP_RESPONSE, &settings)
        parser.data = Unmanaged.passUnretained(run).toOpaque()
        var status = input.withUnsafeBytes { bytes in
            c_nio_llhttp_execute(&parser, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
        }
        // The connection closes after the input, as NIO's decoder is told at the end of input.
        if status == HPE_OK { status = c_nio_llhttp_finish(&parser) }
        run.result.failed = status != HPE_OK && status != HPE_PAUSED && status != HPE_PAUSED_UPGRADE
        return withExtendedLifetime(run) { run.result }
    }
}

/// What llhttp's callbacks have read so far.
final class LLHTTPResponseRun: LLHTTPRun {
    let heads: UInt8
    var result = FuzzedResponses()
    var current: FuzzedResponses.Response?
    /// Final responses whose heads were read (the requests answered).
    var answered = 0
    var informational = false
    var switched = false

    init(heads: UInt8) {
        self.heads = heads
    }
}
