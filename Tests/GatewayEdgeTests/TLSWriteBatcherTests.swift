import NIOCore
import NIOEmbedded
import Testing

@testable import GatewayEdge

/// ``TLSWriteBatcher`` on an embedded channel, whose event loop runs its tasks only when the
/// test says: what one tick writes leaves as one buffer and one flush at the tick's end.
@Suite("HTTP/2 writes gathered per event-loop tick")
struct TLSWriteBatcherTests {
    private static func connection() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(TLSWriteBatcher())
        return channel
    }

    private static func write(_ channel: EmbeddedChannel, _ text: String, flush: Bool = true) -> EventLoopFuture<Void> {
        let written = channel.write(ByteBuffer(string: text))
        if flush { channel.flush() }
        return written
    }

    @Test func writesFlushedDuringATickLeaveAsOneBufferAtItsEnd() throws {
        let channel = try Self.connection()
        let first = Self.write(channel, "HEADERS ")
        let second = Self.write(channel, "DATA ")
        let third = Self.write(channel, "END")
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        channel.embeddedEventLoop.run()
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "HEADERS DATA END"))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        for written in [first, second, third] {
            var done = false
            written.whenSuccess { done = true }
            #expect(done)
        }
    }

    @Test func aLargeWriteIsNotCopiedAndKeepsItsPlaceAfterWhatCameBefore() throws {
        let channel = try Self.connection()
        let large = String(repeating: "x", count: TLSWriteBatcher.largestGatheredWrite + 1)
        _ = Self.write(channel, "DATA-HEADER ", flush: false)
        _ = Self.write(channel, large)
        _ = Self.write(channel, "END")
        channel.embeddedEventLoop.run()
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "DATA-HEADER "))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: large))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "END"))
    }

    @Test func aCloseSendsWhatWasFlushedFirst() throws {
        let channel = try Self.connection()
        _ = Self.write(channel, "GOAWAY")
        _ = channel.close()
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "GOAWAY"))
    }

    @Test func nothingUnflushedLeaves() throws {
        let channel = try Self.connection()
        _ = Self.write(channel, "HEADERS", flush: false)
        channel.embeddedEventLoop.run()
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
    }
}
