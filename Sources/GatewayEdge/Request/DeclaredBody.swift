import NIOHTTP1

/// The body an HTTP/1 request head declares: none, a length, or a transfer coding (`chunked`,
/// the only one ``RequestHeadRules`` lets through). The one reading of the framing fields, for
/// the edge's body deadline and the engine's upstream framing alike.
package enum DeclaredBody: Sendable, Equatable {
    case none
    case length(Int)
    case chunked

    /// Read from fields held as NIO's (a head a rule rewrote, one for the gateway's own
    /// endpoints); an HTTP/1 client's head has its body from the parser's framing
    /// (``ClientRequestHead/declaredBody``).
    package init(_ fields: HTTPHeaders) {
        self.init(hasTransferEncoding: fields.contains(name: "transfer-encoding"), contentLength: fields.first(name: "content-length"))
    }

    /// From what the framing fields say: a transfer coding wins over a length; a length of
    /// zero declares no body.
    package init(hasTransferEncoding: Bool, contentLength: String?) {
        if hasTransferEncoding {
            self = .chunked
        } else if let length = contentLength.flatMap({ Int($0) }), length > 0 {
            self = .length(length)
        } else {
            self = .none
        }
    }
}
