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

    /// A response's block from each field its client gets, in order, a `String` per name and value.
    package static func make(status: HTTPResponseStatus, fields: ((_ name: String, _ value: String) -> Void) -> Void) -> HPACKHeaders {
        var block = start(status: status)
        fields { name, value in add(name: name, value: value, to: &block) }
        return block
    }

    /// A block holding only `:status`, for ``add(name:value:to:)`` to fill.
    package static func start(status: HTTPResponseStatus) -> HPACKHeaders {
        var block = HPACKHeaders()
        block.reserveCapacity(8)
        block.add(name: ":status", value: String(status.code))
        return block
    }

    /// Adds a field the gateway named: name lower-cased, an HTTP/1 connection field left out,
    /// indexed as it deserves.
    package static func add(name: String, value: String, to block: inout HPACKHeaders) {
        var contiguous = name
        contiguous.withUTF8 { bytes in
            let bytes = UnsafeRawBufferPointer(bytes)
            // What ForwardedHeaders passes has none; a response the gateway made might.
            guard !HeaderName.isHopByHop(bytes) else { return }
            let lowercase = bytes.contains { isUppercase($0) } ? lowercased(bytes) : name
            block.add(name: lowercase, value: value, indexing: indexing(ofLowercased: bytes))
        }
    }

    /// Adds a field of an upstream's head, its name read as bytes where it lies (``ForwardedHeaders``
    /// has left the connection fields out): the lower-case name is made from the bytes at once.
    package static func add(name: UnsafeRawBufferPointer, value: String, to block: inout HPACKHeaders) {
        guard !HeaderName.isHopByHop(name) else { return }
        block.add(name: lowercased(name), value: value, indexing: indexing(ofLowercased: name))
    }

    /// `name` in lower case, one pass over its bytes into the new string.
    private static func lowercased(_ name: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: name.count) { buffer in
            for index in 0..<name.count {
                let byte = name[index]
                buffer[index] = isUppercase(byte) ? byte | 0x20 : byte
            }
            return name.count
        }
    }

    private static func isUppercase(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")
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
        var name = name
        return name.withUTF8 { indexing(ofLowercased: UnsafeRawBufferPointer($0)) }
    }

    /// The same for a name's bytes, matched in either case.
    static func indexing(ofLowercased name: UnsafeRawBufferPointer) -> HPACKIndexing {
        if HeaderName.equals(name, "set-cookie") { return .neverIndexed }
        return isPerResponse(name) ? .nonIndexable : .indexable
    }

    /// Fields whose values are new on nearly every response: the gateway's own request id,
    /// trace context and rate-limit counters, and an upstream's validators and ages. By length
    /// first: most names are told apart without comparing a byte.
    private static func isPerResponse(_ name: UnsafeRawBufferPointer) -> Bool {
        switch name.count {
        case 3: HeaderName.equals(name, "age")
        case 4: HeaderName.equals(name, "etag")
        case 7: HeaderName.equals(name, "expires")
        case 8: HeaderName.equals(name, "location")
        case 10: HeaderName.equals(name, HeaderName.tracestate.lowercaseBytes)
        case 11: HeaderName.equals(name, HeaderName.traceparent.lowercaseBytes) || HeaderName.equals(name, "retry-after")
        case 12: HeaderName.equals(name, HeaderName.requestID.lowercaseBytes)
        case 13: HeaderName.equals(name, "last-modified") || HeaderName.equals(name, "content-range")
        case 14: HeaderName.equals(name, "content-length")
        case 15: HeaderName.equals(name, "ratelimit-reset")
        case 17: HeaderName.equals(name, "x-ratelimit-reset")
        case 19: HeaderName.equals(name, "ratelimit-remaining")
        case 21: HeaderName.equals(name, "x-ratelimit-remaining")
        default: false
        }
    }
}
