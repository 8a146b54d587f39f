import NIOCore
import NIOHTTP1

/// A part of a client's HTTP/1 request as ``HTTP1RequestParser`` reads it: the head as its
/// bytes (``ClientRequestHead``), the body as slices of the read buffer, the end with the
/// trailer fields if any (rare: kept as NIO's `HTTPHeaders`).
package typealias ClientRequestPart = HTTPPart<ClientRequestHead, ByteBuffer>
