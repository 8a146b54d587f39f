import GatewayEdge
import HTTPTypes
import NIOHPACK
import NIOHTTP1

/// The head of a response a ``ProxyExchange`` gives its client: the status and where the fields
/// come from, not yet in either protocol's form. The ``ProxyDownstream`` writes it: over HTTP/1.1 as
/// bytes (``ClientResponseHead``), over HTTP/2 as a header block (``HTTP2ProxyStream``). Both
/// take the fields from ``write(into:)``, so the response header rules stay in
/// ``ForwardedHeaders`` alone.
package struct ProxyResponseHead {
    package enum Fields {
        /// The upstream's response head, its fields passed by ``ForwardedHeaders``'s response
        /// rules with the gateway's request ID and its own fields (`RateLimit-*`) added.
        case upstream(UpstreamResponseHead, requestID: String, adding: HTTPFields)
        /// A response the gateway made itself (an error), sent as it was made.
        case gateway(HTTPHeaders)
    }

    package let status: HTTPResponseStatus
    package let fields: Fields
    /// The gateway's CORS fields (``CORSPolicy``) on a route whose CORS it owns; nil: none.
    package var cors: [(name: String, value: String)]? = nil

    /// Writes every field the client gets, in order, into `writer`.
    package func write<Writer: ResponseFieldWriter>(into writer: inout Writer) {
        switch fields {
        case .upstream(let upstream, let requestID, let extra):
            ForwardedHeaders.response(from: upstream, requestID: requestID, adding: extra, cors: cors, into: &writer)
        case .gateway(let headers):
            for (name, value) in headers { writer.add(name: name, value: value) }
            for field in cors ?? [] { writer.add(name: field.name, value: field.value) }
        }
    }

    /// The head as an HTTP/2 header block (``HTTP2ResponseBlock``): an upstream's field names are
    /// lower-cased from their bytes, with no `String` made of them first.
    package func headerBlock() -> HPACKHeaders {
        var writer = HeaderBlockWriter(block: HTTP2ResponseBlock.start(status: status))
        write(into: &writer)
        return writer.block
    }

    private struct HeaderBlockWriter: ResponseFieldWriter {
        var block: HPACKHeaders

        mutating func pass(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, line: UnsafeRawBufferPointer) {
            HTTP2ResponseBlock.add(name: name, value: String(decoding: value, as: UTF8.self), to: &block)
        }

        mutating func add(name: String, value: String) {
            HTTP2ResponseBlock.add(name: name, value: value, to: &block)
        }
    }
}
