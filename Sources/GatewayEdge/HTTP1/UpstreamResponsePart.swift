import NIOCore
import NIOHTTP1

/// A part of an upstream's response as ``HTTP1ResponseParser`` reads it: the head as its bytes,
/// the body as slices of the read buffer, the end with the trailer fields if any (rare: kept
/// as NIO's `HTTPHeaders`).
package enum UpstreamResponsePart: Equatable {
    case head(UpstreamResponseHead)
    case body(ByteBuffer)
    case end(HTTPHeaders?)
}
