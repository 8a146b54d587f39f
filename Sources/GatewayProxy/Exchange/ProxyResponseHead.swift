import HTTPTypes
import NIOHTTP1

/// The head of a response a ``ProxyExchange`` gives its client: the status and where the fields
/// come from, not yet in either protocol's form. The ``ProxyDownstream`` writes it: over HTTP/1.1 as
/// bytes (``ClientResponseHead``), over HTTP/2 as a header block (``HTTP2ProxyStream``). Both
/// take the fields from ``forEachField(_:)``, so the response header rules stay in
/// ``ForwardedHeaders`` alone.
package struct ProxyResponseHead {
    package enum Fields {
        /// The upstream's response fields, passed by ``ForwardedHeaders``'s response rules with
        /// the gateway's request ID and its own fields (`RateLimit-*`) added.
        case upstream(HTTPHeaders, requestID: String, adding: HTTPFields)
        /// A response the gateway made itself (an error), sent as it was made.
        case gateway(HTTPHeaders)
    }

    package let status: HTTPResponseStatus
    package let fields: Fields
    /// The gateway's CORS fields (``CORSPolicy``) on a route whose CORS it owns; nil: none.
    package var cors: [(name: String, value: String)]? = nil

    /// Hands `visit` every field the client gets, in order.
    package func forEachField(_ visit: (_ name: String, _ value: String) -> Void) {
        switch fields {
        case .upstream(let upstream, let requestID, let extra):
            ForwardedHeaders.response(from: upstream, requestID: requestID, adding: extra, cors: cors, visit)
        case .gateway(let headers):
            for (name, value) in headers { visit(name, value) }
            for field in cors ?? [] { visit(field.name, field.value) }
        }
    }
}
