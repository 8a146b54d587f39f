import GatewayPrimitives
import NIOHPACK
import NIOHTTP1

/// The HTTP/2 header block of a response: `:status`, then the fields with names lower-cased
/// and HTTP/1's connection fields left out (RFC 9113, as NIOHTTP2's HTTP/1 codec does for a
/// child channel), each with the HPACK indexing it deserves. Proxied streams build their block
/// here; the gateway's own endpoints' blocks, made by that codec, get their indexing here too
/// (``HTTP2StreamEndMerger``).
///
/// HPACK's encoder adds every indexable field to the connection's dynamic table and scans that
/// whole table for every later field. A field whose value differs on nearly every response
/// (`x-request-id`, the rate-limit counters) can never be matched again, so indexing it only
/// evicts the fields that do repeat and lengthens every scan: such fields are sent as literals
/// without indexing. `set-cookie` is never indexed (RFC 7541 section 7.1.3): a session cookie
/// must not be guessable through the compression state, here or at an intermediary.
package enum HTTP2ResponseBlock {
    /// A response's block from its HTTP/1 status and fields, those its `Connection` lists left
    /// out too.
    package static func make(status: HTTPResponseStatus, fields: HTTPHeaders) -> HPACKHeaders {
        let listed = fields[canonicalForm: "connection"]
        return make(status: status) { visit in
            for (name, value) in fields where !listed.contains(where: { HeaderName.equals(name, $0.lowercased()) }) {
                visit(name, value)
            }
        }
    }

    /// A proxied response's block in one pass over the fields its client gets
    /// (``ProxyResponseHead``'s `forEachField`), with no HTTP/1 field list made in between: names
    /// lower-cased, HTTP/1's connection fields left out, each field indexed as it deserves.
    package static func make(status: HTTPResponseStatus, fields: ((_ name: String, _ value: String) -> Void) -> Void) -> HPACKHeaders {
        var block = HPACKHeaders()
        block.reserveCapacity(8)
        block.add(name: ":status", value: String(status.code))
        fields { name, value in
            let name = lowercased(name)
            // What ForwardedHeaders passes has none; a response the gateway made might.
            guard !HeaderName.isHopByHop(name) else { return }
            block.add(name: name, value: value, indexing: indexing(ofLowercased: name))
        }
        return block
    }

    /// `name` in lower case, itself when it is already (no new string).
    private static func lowercased(_ name: String) -> String {
        name.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") } ? name.lowercased() : name
    }

    /// `block` (names already lower-case) with each field's indexing.
    package static func indexed(_ block: HPACKHeaders) -> HPACKHeaders {
        var indexed = HPACKHeaders()
        indexed.reserveCapacity(block.count)
        for field in block {
            indexed.add(name: field.name, value: field.value, indexing: field.indexable == .indexable ? indexing(ofLowercased: field.name) : field.indexable)
        }
        return indexed
    }

    /// How a field named `name` (lower-case) is indexed.
    package static func indexing(ofLowercased name: String) -> HPACKIndexing {
        if name == "set-cookie" { return .neverIndexed }
        return perResponseNames.contains(name) ? .nonIndexable : .indexable
    }

    /// Fields whose values are new on nearly every response: the gateway's own request id,
    /// trace context and rate-limit counters, and an upstream's validators and ages.
    private static let perResponseNames: Set<String> = [
        HeaderName.requestID.lowercase, HeaderName.traceparent.lowercase, HeaderName.tracestate.lowercase,
        "x-ratelimit-remaining", "x-ratelimit-reset", "ratelimit-remaining", "ratelimit-reset", "retry-after",
        "content-length", "etag", "last-modified", "age", "expires", "location", "content-range",
    ]
}
