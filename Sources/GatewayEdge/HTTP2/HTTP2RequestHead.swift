import NIOCore
import NIOHPACK
import NIOHTTP1

/// A request's HTTP/2 header block as the HTTP/1 head the proxy engine reads, made the way
/// NIOHTTP2's `HTTP2FramePayloadToHTTP1ServerCodec` makes it for a child channel: the
/// pseudo-fields become the method and target, `:authority` becomes `Host` (unless one is
/// there), and a request that declares no length gets `Transfer-Encoding: chunked` when a body
/// may follow its head (its stream did not end with it), whatever its method, and
/// `Content-Length: 0` when its stream ended with the head and its method defines a meaning for
/// content. The framing always says whether DATA follows: a `GET` whose DATA went upstream
/// unframed would be read there as a request of its own (smuggling).
///
/// One difference: `cookie` fields, which an HTTP/2 client may split into several for HPACK,
/// are joined with "; " into one, where the first was (RFC 9113 §8.2.3): an HTTP/1.1 upstream
/// must see one `Cookie` field.
package enum HTTP2RequestHead {
    /// What a stream's request header block turned out to be.
    package enum Reading {
        /// A well-formed request, laid out as its HTTP/1 head.
        case head(ClientRequestHead)
        /// Well-formed, but not a request the proxy takes as it stands (a `CONNECT`, or no
        /// `:authority`): a child channel's codec and edge answer it, as before.
        case passOn
        /// Malformed (RFC 9113 §8.1.1): a pseudo-field missing, repeated, unknown, after a
        /// regular field or with a bad value, or a regular field ``HTTP2FieldRules`` refuses.
        /// Its stream is reset with `PROTOCOL_ERROR`.
        case malformed
    }

    /// The head of a stream (`endStream`: its HEADERS frame ended it), checked and laid out as
    /// HTTP/1 field lines (`name: value`) in one buffer from `allocator`, in one pass over the
    /// block: no `HTTPHeaders` on the way, and no second validation inside NIOHTTP2.
    package static func read(
        _ block: HPACKHeaders, endStream: Bool, allocator: ByteBufferAllocator = ByteBufferAllocator()
    ) -> Reading {
        var method: String?
        var path: String?
        var scheme: String?
        var authority: String?
        var hasHost = false
        var contentLength: String?
        var regular = 0
        var regularBytes = 0
        for (name, value, _) in block {
            guard name.utf8.first == UInt8(ascii: ":") else {
                guard HTTP2FieldRules.isValidRegularField(name: name, value: value) else { return .malformed }
                regular += 1
                regularBytes += name.utf8.count + value.utf8.count + 4
                switch name {
                case "host": hasHost = true
                case "content-length": if contentLength == nil { contentLength = value }
                case "te": guard HTTP2FieldRules.isValidRequestTE(value) else { return .malformed }
                default: break
                }
                continue
            }
            // Pseudo-fields come first, once each, from the four a request may carry.
            guard regular == 0, HTTP2FieldRules.isValidPseudoValue(value) else { return .malformed }
            switch name {
            case ":method": guard method == nil else { return .malformed }; method = value
            case ":path": guard path == nil, !value.isEmpty else { return .malformed }; path = value
            case ":scheme": guard scheme == nil else { return .malformed }; scheme = value
            case ":authority": guard authority == nil else { return .malformed }; authority = value
            default: return .malformed
            }
        }
        guard let method else { return .malformed }
        // Only the methods HTTP/1.1's parser takes (NIO's): any other would be a new metric
        // series per request, named by the client, as on HTTP/1.1 it is refused.
        if case .RAW = HTTPMethod(rawValue: method) { return .malformed }
        if method == "CONNECT" {
            // RFC 9113 §8.5: `:method` and `:authority` only (no extended CONNECT: the gateway
            // does not advertise it).
            return path == nil && scheme == nil && authority != nil ? .passOn : .malformed
        }
        guard let path, scheme != nil else { return .malformed }
        guard let authority else { return .passOn }
        let httpMethod = HTTPMethod(rawValue: method)
        // The framing field added when the block declares no length, and the body the head then declares.
        let added: (name: StaticString, value: StaticString)?
        if contentLength != nil {
            added = nil
        } else if !endStream {
            added = ("transfer-encoding", "chunked")
        } else {
            added = httpMethod.definesContent ? ("content-length", "0") : nil
        }
        // The block carries no Transfer-Encoding (connection-specific): chunked only as added.
        let declaredBody = DeclaredBody(hasTransferEncoding: contentLength == nil && !endStream, contentLength: contentLength)
        var bytes = allocator.buffer(capacity: method.utf8.count + path.utf8.count + authority.utf8.count + regularBytes + 48)
        bytes.writeString(method)
        bytes.writeStaticString(" ")
        bytes.writeString(path)
        bytes.writeStaticString(" HTTP/2.0\r\n")
        return withUnsafeTemporaryAllocation(of: HTTP1FieldLine.self, capacity: regular + 2) { lines in
            var count = 0
            func line(_ name: (inout ByteBuffer) -> Void, _ value: (inout ByteBuffer) -> Void) {
                (lines.baseAddress! + count).initialize(to: HTTP1FieldLine.write(into: &bytes, name: name, value: value))
                count += 1
            }
            if !hasHost { line({ $0.writeStaticString("host") }, { $0.writeString(authority) }) }
            if let added { line({ $0.writeStaticString(added.name) }, { $0.writeStaticString(added.value) }) }
            var cookiesJoined = false
            for index in block.indices {
                let (name, value, _) = block[index]
                guard name.utf8.first != UInt8(ascii: ":") else { continue }
                if name == "cookie" {
                    // Every cookie field, joined where the first was.
                    guard !cookiesJoined else { continue }
                    cookiesJoined = true
                    line({ $0.writeString(name) }) { bytes in
                        bytes.writeString(value)
                        for later in block[block.index(after: index)...] where later.name == "cookie" {
                            bytes.writeStaticString("; ")
                            bytes.writeString(later.value)
                        }
                    }
                    continue
                }
                line({ $0.writeString(name) }, { $0.writeString(value) })
            }
            bytes.writeStaticString("\r\n")
            // Keep-alive is HTTP/1's: false, as NIO's head of an HTTP/2 request says.
            let summary = ClientRequestHead.Summary(
                method: httpMethod, target: path, version: .http2, isKeepAlive: false, declaredBody: declaredBody, bytes: bytes
            )
            return .head(ClientRequestHead(summary, lines: UnsafeBufferPointer(start: lines.baseAddress, count: count)))
        }
    }
}

extension HTTPMethod {
    /// Whether RFC 9110 gives content in a request of this method a meaning (an empty body is
    /// still sent with `Content-Length: 0`).
    fileprivate var definesContent: Bool {
        switch self {
        case .GET, .HEAD, .DELETE, .CONNECT, .TRACE: false
        default: true
        }
    }
}
