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
    /// The head of a stream (`endStream`: its HEADERS frame ended it); nil when a pseudo-field
    /// is missing, repeated or malformed (the child channel's codec then refuses the stream, as
    /// before).
    package static func make(from block: HPACKHeaders, endStream: Bool) -> HTTPRequestHead? {
        var method: String?
        var path: String?
        var scheme: String?
        var authority: String?
        var hasHost = false
        var regular = 0
        for (name, value, _) in block {
            guard name.utf8.first == UInt8(ascii: ":") else {
                regular += 1
                if !hasHost, name == "host" { hasHost = true }
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
        var fields: [(String, String)] = []
        fields.reserveCapacity(regular + 2)
        if !hasHost { fields.append(("host", authority)) }
        if !block.contains(name: "content-length") {
            if !endStream {
                fields.append(("transfer-encoding", "chunked"))
            } else if httpMethod.definesContent {
                fields.append(("content-length", "0"))
            }
        }
        var cookieIndex: Int?
        for (name, value, _) in block where name.utf8.first != UInt8(ascii: ":") {
            if name == "cookie" {
                if let cookieIndex {
                    fields[cookieIndex].1 += "; " + value
                    continue
                }
                cookieIndex = fields.count
            }
            fields.append((name, value))
        }
        return HTTPRequestHead(version: .http2, method: httpMethod, uri: path, headers: HTTPHeaders(fields))
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
