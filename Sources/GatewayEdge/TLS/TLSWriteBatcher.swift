import NIOCore

/// Sits right above the TLS handler of a client connection (HTTP/2, and HTTP/1.1 over TLS)
/// and turns what one event-loop tick writes into one TLS write: the bytes are gathered into
/// one buffer, and the flushes asked for during the tick become one flush at its end.
///
/// Why: each buffer handed to the TLS handler is sealed as a TLS record of its own, and on
/// HTTP/2 a proxied stream is answered on its upstream connection's read, where NIOHTTP2 does
/// not hold flushes back (it only coalesces those asked for while the client connection is
/// being read), so every frame of every response would be a record and every response a `write(2)`.
/// Gathered, the streams answered in one tick share records and one system call, as nginx's
/// output buffer does; on HTTP/1.1 a response's head and body (two buffers or more) are one
/// record (docs/DECISIONS.md, "Output gathered per event-loop pass").
///
/// Nothing is held past the tick: the flush runs as a task on the same event loop, after the
/// I/O events of this pass. Large writes (request bodies' and answers' big DATA payloads) are
/// not copied: what was gathered goes first, then the large buffer as it is.
package final class TLSWriteBatcher: ChannelOutboundHandler, RemovableChannelHandler {
    package init() {}

    package typealias OutboundIn = IOData
    package typealias OutboundOut = IOData

    /// Writes up to this size are copied into the gathered buffer; larger ones pass as they are.
    package static let largestGatheredWrite = 4096

    private var context: ChannelHandlerContext?
    /// The bytes written since the last write downstream.
    private var gathered: ByteBuffer?
    /// The promise of the gathered bytes; the later writes' promises are cascaded from it.
    private var gatheredPromise: EventLoopPromise<Void>?
    private var flushScheduled = false

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        if gathered != nil || flushScheduled {
            writeGathered(context: context)
            context.flush()
        }
        self.context = nil
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .byteBuffer(let buffer) = unwrapOutboundIn(data), buffer.readableBytes <= Self.largestGatheredWrite else {
            writeGathered(context: context)
            context.write(data, promise: promise)
            return
        }
        if gathered == nil {
            gathered = buffer
        } else {
            gathered!.writeImmutableBuffer(buffer)
        }
        if let promise {
            if let gatheredPromise {
                gatheredPromise.futureResult.cascade(to: promise)
            } else {
                gatheredPromise = promise
            }
        }
    }

    package func flush(context: ChannelHandlerContext) {
        guard !flushScheduled else { return }
        flushScheduled = true
        context.eventLoop.assumeIsolated().execute { [self] in
            guard flushScheduled, let context = self.context else { return }
            flushNow(context: context)
        }
    }

    package func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // A GOAWAY written just before goes out ahead of the close.
        if flushScheduled { flushNow(context: context) }
        context.close(mode: mode, promise: promise)
    }

    private func flushNow(context: ChannelHandlerContext) {
        flushScheduled = false
        writeGathered(context: context)
        context.flush()
    }

    private func writeGathered(context: ChannelHandlerContext) {
        guard let buffer = gathered else { return }
        let promise = gatheredPromise
        gathered = nil
        gatheredPromise = nil
        context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: promise)
    }
}
