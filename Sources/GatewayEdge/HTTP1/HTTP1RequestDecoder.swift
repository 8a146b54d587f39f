import NIOCore
import NIOHTTP1

/// The gateway's request parser (``HTTP1RequestParser``) as the pipeline's decoder, in place
/// of NIO's `HTTPRequestDecoder`: its parts carry the head as bytes (``ClientRequestPart``), its
/// errors are NIO's `HTTPParserError`s (docs/DECISIONS.md, "The gateway's own HTTP/1 request parser").
/// Bytes left at its removal (after a protocol switch) are dropped, as NIO's `.dropBytes` does.
package struct HTTP1RequestDecoder: ByteToMessageDecoder {
    package typealias InboundOut = ClientRequestPart

    private var parser: HTTP1RequestParser

    /// `maxHeadBytes`: the longest request head or trailer section (`431` beyond it).
    package init(maxHeadBytes: Int) {
        parser = HTTP1RequestParser(maxHeadBytes: maxHeadBytes)
    }

    package mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let part = try parser.next(&buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(part))
        // A request's end may take no bytes of its own (a bodiless head, a body's last byte),
        // and ByteToMessageHandler calls again only for bytes: it goes with the part before it.
        if parser.endsNext, let end = try parser.next(&buffer) {
            context.fireChannelRead(wrapInboundOut(end))
        }
        return .continue
    }

    package mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while let part = try parser.next(&buffer) {
            context.fireChannelRead(wrapInboundOut(part))
        }
        if seenEOF { try parser.inputEnded(unread: buffer) }
        return .needMoreData
    }
}
