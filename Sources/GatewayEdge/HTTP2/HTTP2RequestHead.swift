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
    /// The head of a stream (`endStream`: its HEADERS frame ended it), laid out as HTTP/1 field
    /// lines (`name: value`) in one buffer from `allocator`; nil when a pseudo-field is missing,
    /// repeated or malformed (the child channel's codec then refuses the stream, as before).
    /// Written straight from the header block: no `HTTPHeaders` on the way.
    package static func make(
        from block: HPACKHeaders, endStream: Bool, allocator: ByteBufferAllocator = ByteBufferAllocator()
    ) -> ClientRequestHead? {
        var method: String?
        var path: String?
        var scheme: String?
        var authority: String?
        var hasHost = false
        var contentLength: String?
        var hasTransferEncoding = false
        var regular = 0
        var regularBytes = 0
        for (name, value, _) in block {
            guard name.utf8.first == UInt8(ascii: ":") else {
                regular += 1
                regularBytes += name.utf8.count + value.utf8.count + 4
                switch name {
                case "host": hasHost = true
                case "content-length": if contentLength == nil { contentLength = value }
                case "transfer-encoding": hasTransferEncoding = true
                default: break
                }
                continue
            }
            switch name {
            case ":method": guard method == nil else { return nil }; method = value
            case ":path": guard path == nil else { return nil }; path = value
            case ":scheme": guard scheme == nil else { return nil }; scheme = value
            case ":authority": guard authority == nil else { return nil }; authority = value
            default: break
            }
        }
        guard let method, let path, let scheme, let authority,
            isValidPseudoValue(method), isValidPseudoValue(path), isValidPseudoValue(scheme), isValidPseudoValue(authority)
        else { return nil }
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
        let declaredBody = DeclaredBody(
            hasTransferEncoding: hasTransferEncoding || (contentLength == nil && !endStream), contentLength: contentLength
        )
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
            return ClientRequestHead(summary, lines: UnsafeBufferPointer(start: lines.baseAddress, count: count))
        }
    }

    /// No control byte, space or DEL: what NIOHTTP2 accepts in a pseudo-field.
    private static func isValidPseudoValue(_ value: String) -> Bool {
        !value.utf8.contains { $0 <= 0x20 || $0 == 0x7F }
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
