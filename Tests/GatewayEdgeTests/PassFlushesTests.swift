import NIOCore
import NIOEmbedded
import NIOPosix
import Testing

@testable import GatewayEdge

/// ``PassFlushes``: on NIO's loops a flush waits for the end of the loop's pass, once per
/// handler however often it is asked for; elsewhere it happens at once.
@Suite("Flushes at the end of the loop's pass")
struct PassFlushesTests {
    /// Counts its flushes; touched only on its loop.
    final class Handler: PassFlushable, @unchecked Sendable {
        var passFlushPending = false
        var flushes = 0
        func flushAtPassEnd() { flushes += 1 }
    }

    @Test("flushes asked for during a pass happen after it, once per handler")
    func waitsForThePassToEnd() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let (first, second) = (Handler(), Handler())
        let during = try await loop.submit {
            PassFlushes.flush(first, on: loop)
            PassFlushes.flush(second, on: loop)
            PassFlushes.flush(first, on: loop)
            return [first.flushes, second.flushes]
        }.get()
        // The pass's flush task was queued before this one.
        let after = try await loop.submit { [first.flushes, second.flushes, first.passFlushPending ? 1 : 0] }.get()
        try await group.shutdownGracefully()
        #expect(during == [0, 0])
        #expect(after == [1, 1, 0])
    }

    @Test("a handler that flushed on its own before the pass ended is not flushed again")
    func skipsWhatWasFlushed() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let handler = Handler()
        try await loop.submit {
            PassFlushes.flush(handler, on: loop)
            // As a handler leaving its pipeline does: it flushes and clears its mark.
            handler.passFlushPending = false
            handler.flushAtPassEnd()
        }.get()
        let flushes = try await loop.submit { handler.flushes }.get()
        try await group.shutdownGracefully()
        #expect(flushes == 1)
    }

    @Test("on an embedded loop the flush happens at once")
    func embeddedLoopFlushesAtOnce() {
        let loop = EmbeddedEventLoop()
        let handler = Handler()
        PassFlushes.flush(handler, on: loop)
        #expect(handler.flushes == 1)
        #expect(!handler.passFlushPending)
    }
}
