import NIOCore
import NIOHTTP1

/// NIO's HTTP/1 response parser for an upstream connection, told each request's method
/// directly (``expectResponse(to:)``) instead of by watching request parts go by.
///
/// NIO's `HTTPResponseDecoder` learns the methods (a response to `HEAD` has no body, whatever
/// its `Content-Length`) from the `HTTPClientRequestPart`s written through its handler. The
/// gateway writes request bytes (``UpstreamRequestHead``), which that handler cannot take, so
/// this wrapper keeps the parser and leaves writes alone: they skip the decoder's handler, one
/// pipeline hop fewer per write.
package final class UpstreamResponseDecoder: ByteToMessageDecoder {
    package typealias InboundOut = HTTPClientResponsePart

    /// After a `101` the parser stops; what the upstream sent behind it (its first frames) is
    /// handed on as bytes when the decoder is removed for a ``WebSocketTunnel``.
    private let parser = HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes)
    /// The head last handed to the parser, reused while the method stays the same (the parser
    /// keeps a whole head per request, though only its method matters).
    private var lastHead = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/")

    /// The next response read answers a request with `method`.
    package func expectResponse(to method: HTTPMethod) {
        if lastHead.method != method { lastHead = HTTPRequestHead(version: .http1_1, method: method, uri: "/") }
        parser.write(data: .head(lastHead))
    }

    package func decoderAdded(context: ChannelHandlerContext) {
        parser.decoderAdded(context: context)
    }

    package func decoderRemoved(context: ChannelHandlerContext) {
        parser.decoderRemoved(context: context)
    }

    package func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        try parser.decode(context: context, buffer: &buffer)
    }

    package func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try parser.decodeLast(context: context, buffer: &buffer, seenEOF: seenEOF)
    }
}
