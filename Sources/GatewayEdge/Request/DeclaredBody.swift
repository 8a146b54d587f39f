import NIOHTTP1

/// The body an HTTP/1 request head declares: none, a length, or a transfer coding (`chunked`,
/// the only one ``RequestHeadRules`` lets through). The one reading of the framing fields, for
/// the edge's body deadline and the engine's upstream framing alike.
package enum DeclaredBody: Sendable, Equatable {
    case none
    case length(Int)
    case chunked

    /// Read from fields held as NIO's (an HTTP/2 stream's); an HTTP/1 client's head has its
    /// body from the parser's framing (``ClientRequestHead/declaredBody``).
    package init(_ fields: HTTPHeaders) {
        if fields.contains(name: "transfer-encoding") {
            self = .chunked
        } else if let length = fields.first(name: "content-length").flatMap({ Int($0) }), length > 0 {
            self = .length(length)
        } else {
            self = .none
        }
    }
}
