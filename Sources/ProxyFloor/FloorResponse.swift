import NIOCore
import NIOHPACK

/// An upstream's whole response, as the HTTP/2 floor hands it to a stream: its HEADERS
/// block (``UpstreamResponseReader``) and its body.
struct FloorResponse {
    var headers: HPACKHeaders
    var body: ByteBuffer
}

/// Where a response goes: the stream that asked for it.
protocol FloorResponder: AnyObject {
    func respond(_ response: FloorResponse, stream: Int)
}
