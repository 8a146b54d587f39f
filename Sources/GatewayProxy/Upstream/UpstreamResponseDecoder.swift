import GatewayEdge
import NIOCore
import NIOHTTP1

/// The gateway's HTTP/1 response parser (``HTTP1ResponseParser``) for an upstream connection,
/// told each request's method directly (``expectResponse(to:)``): the gateway writes request
/// bytes (``UpstreamRequestHead``), so no request part goes by for a decoder to watch, and
/// writes skip this handler.
///
/// Heads are handed on as bytes (``UpstreamResponseHead``), bodies as slices of the read
/// buffer. After a `101` the parser stops: what the upstream sent behind it (its first frames)
/// is handed on as bytes when the decoder is removed for a ``WebSocketTunnel``, as NIO's
/// `.forwardBytes` did.
package final class UpstreamResponseDecoder: ByteToMessageDecoder {
    package typealias InboundOut = UpstreamResponsePart

    private var parser = HTTP1ResponseParser()
    /// The upstream sent more than the response it owed, in one read: never reused.
    package private(set) var isOutOfStep = false

    /// The next response read answers a request with `method`.
    package func expectResponse(to method: HTTPMethod) {
        parser.expectResponse(to: method)
    }

    package func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let part = try parser.next(&buffer) else { return .needMoreData }
        try hand(part, context: context, unread: buffer)
        // A response's end may take no bytes of its own (a bodiless head, a body's last byte),
        // and ByteToMessageHandler calls again only for bytes: it goes with the part before it.
        if parser.endsNext, let end = try parser.next(&buffer) {
            try hand(end, context: context, unread: buffer)
        }
        return .continue
    }

    package func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while let part = try parser.next(&buffer) {
            try hand(part, context: context, unread: buffer)
        }
        if seenEOF {
            if let end = try parser.inputEnded(unread: buffer) { context.fireChannelRead(wrapInboundOut(end)) }
        } else if buffer.readableBytes > 0 {
            // Removed after a protocol switch: the other protocol's first bytes go on.
            context.fireChannelRead(NIOAny(buffer.readSlice(length: buffer.readableBytes)!))
        }
        return .needMoreData
    }

    /// Hands `part` on. Bytes behind a response's end in what was read with it answer a request
    /// the gateway had not sent (it never pipelines): the upstream is out of step. The
    /// connection is marked so before the end is handed on (the pool does not keep it, so no
    /// request goes out on it), and fails right after, before anyone could read those bytes
    /// as an answer.
    private func hand(_ part: UpstreamResponsePart, context: ChannelHandlerContext, unread: ByteBuffer) throws {
        guard case .end = part, HTTP1ResponseParser.holdsMoreThanEmptyLines(unread) else {
            context.fireChannelRead(wrapInboundOut(part))
            return
        }
        isOutOfStep = true
        context.fireChannelRead(wrapInboundOut(part))
        throw NIOHTTPDecoderError.unsolicitedResponse
    }
}
