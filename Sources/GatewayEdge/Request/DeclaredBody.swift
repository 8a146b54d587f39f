import NIOHTTP1

/// The body an HTTP/1 request head declares: none, a length, or a transfer coding (`chunked`,
/// the only one ``RequestHeadRules`` lets through). The one reading of the framing fields, for
/// the edge's body deadline and the engine's upstream framing alike.
package enum DeclaredBody: Sendable, Equatable {
    case none
    case length(Int)
    case chunked

    package init(_ fields: HTTPHeaders) {
        self.init(transferEncoding: fields.contains(name: "transfer-encoding"), contentLength: fields.first(name: "content-length"))
    }

    /// The same read from a head's bytes (an HTTP/1 client's, an HTTP/2 stream's laid out so).
    package init(_ head: ClientRequestHead) {
        self.init(transferEncoding: head.contains("transfer-encoding"), contentLength: head.first("content-length"))
    }

    private init(transferEncoding: Bool, contentLength: String?) {
        if transferEncoding {
            self = .chunked
        } else if let length = contentLength.flatMap({ Int($0) }), length > 0 {
            self = .length(length)
        } else {
            self = .none
        }
    }
}
