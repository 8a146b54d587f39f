import NIOCore
import NIOHTTP2

/// The first handler of an HTTP/2 stream: a response's last DATA frame carries END_STREAM
/// itself, instead of an empty DATA frame after it, and a HEADERS frame's fields get the
/// HPACK indexing of ``HTTP2ResponseBlock``.
///
/// Why: `HTTP2FramePayloadToHTTP1ServerCodec` turns an HTTP/1 response's end into a frame of
/// its own, so the usual small answer (head, body, end) was three frames, each through
/// NIOHTTP2's stream state machine, flow control and frame encoder. Here a DATA frame waits
/// for what comes next: an empty ending DATA frame is folded into it; anything else, or a
/// flush, sends it as it was. Nothing waits past a flush, so no byte is delayed.
package final class HTTP2StreamEndMerger: ChannelOutboundHandler, RemovableChannelHandler {
    package init() {}

    package typealias OutboundIn = HTTP2Frame.FramePayload
    package typealias OutboundOut = HTTP2Frame.FramePayload

    private var heldData: HTTP2Frame.FramePayload.Data?
    private var heldPromise: EventLoopPromise<Void>?

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var payload = unwrapOutboundIn(data)
        if case .headers(var headers) = payload {
            headers.headers = HTTP2ResponseBlock.indexed(headers.headers)
            payload = .headers(headers)
        }
        if case .data(let next) = payload, next.endStream, next.data.readableBytes == 0, var held = heldData {
            heldData = nil
            held.endStream = true
            let promise = Self.joined(heldPromise, promise)
            heldPromise = nil
            context.write(wrapOutboundOut(.data(held)), promise: promise)
            return
        }
        writeHeld(context: context)
        if case .data(let next) = payload, !next.endStream {
            heldData = next
            heldPromise = promise
        } else {
            context.write(wrapOutboundOut(payload), promise: promise)
        }
    }

    package func flush(context: ChannelHandlerContext) {
        writeHeld(context: context)
        context.flush()
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        writeHeld(context: context)
    }

    private func writeHeld(context: ChannelHandlerContext) {
        guard let held = heldData else { return }
        heldData = nil
        let promise = heldPromise
        heldPromise = nil
        context.write(wrapOutboundOut(.data(held)), promise: promise)
    }

    private static func joined(_ first: EventLoopPromise<Void>?, _ second: EventLoopPromise<Void>?) -> EventLoopPromise<Void>? {
        guard let first else { return second }
        if let second { first.futureResult.cascade(to: second) }
        return first
    }
}
