// libFuzzer target: the gateway's HTTP/1.1 request parser (Sources/GatewayEdge/HTTP1/HTTP1RequestParser.swift)
// against NIO's llhttp-based HTTPRequestDecoder. Compiled by Fuzz/build.sh into the module
// GatewayEdge with that module's files.
//
// The first byte of an input says how the rest arrives (pieces of 1 to 16 bytes); the rest is
// the connection's bytes. Whatever they are, the parser must not crash, must frame them the
// same however they arrive, and wherever both parsers accept, every request both read whole
// must be the same request (method, target, version, fields, body, trailers): two parsers
// that frame one stream differently are what request smuggling needs.

import CNIOLLHTTP
import NIOCore
import NIOHTTP1

@_cdecl("LLVMFuzzerTestOneInput")
public func http1RequestFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let whole = FuzzedRequests.gateway(input, piece: max(input.count, 1))
    let pieces = FuzzedRequests.gateway(input, piece: Int(data[0] % 16) + 1)
    precondition(whole == pieces, "framed differently in pieces of \(data[0] % 16 + 1): \(whole) against \(pieces)")
    let llhttp = FuzzedRequests.llhttp(input)
    let both = min(whole.requests.count, llhttp.requests.count)
    precondition(Array(whole.requests.prefix(both)) == Array(llhttp.requests.prefix(both)),
                 "framed differently from llhttp: \(whole) against \(llhttp)")
    if !whole.failed, !llhttp.failed {
        precondition(whole.requests.count == llhttp.requests.count, "a different number of requests: \(whole) against \(llhttp)")
    }
    return 0
}

/// The requests a parser read whole from a connection's bytes, and whether it refused them.
struct FuzzedRequests: Equatable, CustomStringConvertible {
    struct Request: Equatable {
        var head: String
        var fields: [String]
        var body: [UInt8] = []
        var trailers: [String] = []
    }

    var requests: [Request] = []
    var failed = false
    private var current: Request?

    init() {}

    var description: String {
        "\(failed ? "refused" : "accepted") after \(requests.map { "\($0.head) \($0.fields) body \($0.body.count) trailers \($0.trailers)" })"
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.requests == rhs.requests && lhs.failed == rhs.failed
    }

    private static let maxHeadBytes = 1 << 20

    fileprivate mutating func add(_ part: HTTPServerRequestPart) {
        switch part {
        case .head(let head):
            current = Request(head: "\(head.method.rawValue) \(head.uri) \(head.version)", fields: Self.fields(head.headers))
        case .body(let chunk):
            current?.body += chunk.readableBytesView
        case .end(let trailers):
            guard var request = current else { return }
            request.trailers = trailers.map(Self.fields) ?? []
            requests.append(request)
            current = nil
        }
    }

    /// A part of the gateway's parser, its head read through NIO's form (made from the field
    /// lines the parser kept), compared as llhttp's.
    fileprivate mutating func add(_ part: ClientRequestPart) {
        switch part {
        case .head(let head): add(HTTPServerRequestPart.head(head.requestHead))
        case .body(let chunk): add(HTTPServerRequestPart.body(chunk))
        case .end(let trailers): add(HTTPServerRequestPart.end(trailers))
        }
    }

    private static func fields(_ headers: HTTPHeaders) -> [String] {
        headers.map { LLHTTPRun.field($0.name, $0.value) }
    }

    static func gateway(_ input: [UInt8], piece: Int) -> FuzzedRequests {
        var parser = HTTP1RequestParser(maxHeadBytes: maxHeadBytes)
        var result = FuzzedRequests()
        var buffer = ByteBuffer()
        do {
            for start in stride(from: 0, to: input.count, by: piece) {
                buffer.writeBytes(input[start..<min(start + piece, input.count)])
                while let part = try parser.next(&buffer) { result.add(part) }
            }
        } catch {
            result.failed = true
        }
        return result
    }

    /// The requests llhttp reads, run as NIO's `HTTPRequestDecoder` runs it (no lenient flags;
    /// it stops at a protocol switch), through its C interface: its own callbacks build them.
    static func llhttp(_ input: [UInt8]) -> FuzzedRequests {
        let run = LLHTTPRequestRun()
        var settings = llhttp_settings_t()
        c_nio_llhttp_settings_init(&settings)
        settings.on_url = { parser, bytes, count in LLHTTPRequestRun.of(parser).url += UnsafeRawBufferPointer(start: bytes, count: count); return 0 }
        LLHTTPRun.readFields(&settings)
        settings.on_headers_complete = { parser in
            let run = LLHTTPRequestRun.of(parser)
            run.endField()
            let method = String(cString: c_nio_llhttp_method_name(llhttp_method_t(rawValue: numericCast(parser!.pointee.method))))
            let version = HTTPVersion(major: Int(parser!.pointee.http_major), minor: Int(parser!.pointee.http_minor))
            run.current = Request(head: "\(method) \(String(decoding: run.url, as: UTF8.self)) \(version)", fields: run.fields)
            run.fields = []
            return 0
        }
        settings.on_body = { parser, bytes, count in LLHTTPRequestRun.of(parser).current?.body += UnsafeRawBufferPointer(start: bytes, count: count); return 0 }
        settings.on_message_complete = { parser in
            let run = LLHTTPRequestRun.of(parser)
            run.endField()
            if var request = run.current {
                request.trailers = run.fields
                run.result.requests.append(request)
            }
            run.current = nil
            run.fields = []
            run.url = []
            return 0
        }
        var parser = llhttp_t()
        c_nio_llhttp_init(&parser, HTTP_REQUEST, &settings)
        parser.data = Unmanaged.passUnretained(run).toOpaque()
        let status = input.withUnsafeBytes { bytes in
            c_nio_llhttp_execute(&parser, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
        }
        run.result.failed = status != HPE_OK && status != HPE_PAUSED_UPGRADE
        return withExtendedLifetime(run) { run.result }
    }
}

/// What llhttp's callbacks have read so far.
final class LLHTTPRequestRun: LLHTTPRun {
    var result = FuzzedRequests()
    var current: FuzzedRequests.Request?
    var url: [UInt8] = []
}
