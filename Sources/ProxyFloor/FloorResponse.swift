import NIOCore

/// An upstream's whole response, as the HTTP/2 floor hands it to a stream: the status, the
/// fields an HTTP/2 response may carry (lower-case names, no connection-specific ones) and
/// the body.
struct FloorResponse {
    var status: Int
    var fields: [(String, String)]
    var body: ByteBuffer
}

/// Where a response goes: the stream that asked for it.
protocol FloorResponder: AnyObject {
    func respond(_ response: FloorResponse, stream: Int)
}
