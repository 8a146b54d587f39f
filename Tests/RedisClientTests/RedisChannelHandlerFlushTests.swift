import NIOCore
import NIOEmbedded
@testable import RedisClient
import Testing

/// When a connection writes what callers on its loop sent (``RedisChannelHandler/submitOnLoop(_:)``):
/// at the end of the loop tick, unless the last write was less than the flush interval ago,
/// then once it has passed. On the embedded loop's clock, without Redis.
@Suite("Redis connection: writes at most once per flush interval")
struct RedisChannelHandlerFlushTests {
    private func request(_ command: String) -> RedisPendingRequest {
        RedisPendingRequest(payload: ByteBuffer(string: command), replyCount: 1, deadline: .distantFuture, waiter: .callback { _ in })
    }

    private func written(_ channel: EmbeddedChannel) throws -> [String] {
        var commands: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { commands.append(String(buffer: buffer)) }
        return commands
    }

    @Test func commandsSoonAfterAWriteWaitForTheIntervalAndLeaveTogether() throws {
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(loop: loop)
        let handler = RedisChannelHandler(flushInterval: .microseconds(100))
        try channel.pipeline.syncOperations.addHandler(handler)
        defer { _ = try? channel.finish() }

        // Nothing written before: at the end of the tick.
        handler.submitOnLoop(request("first"))
        #expect(try written(channel) == [])
        loop.run()
        #expect(try written(channel) == ["first"])

        // Two ticks within the interval: held, then written together when it has passed.
        handler.submitOnLoop(request("second"))
        loop.run()
        loop.advanceTime(by: .microseconds(40))
        handler.submitOnLoop(request("third"))
        loop.run()
        #expect(try written(channel) == [])
        loop.advanceTime(by: .microseconds(59))
        #expect(try written(channel) == [])
        loop.advanceTime(by: .microseconds(1))
        #expect(try written(channel) == ["second", "third"])

        // Quiet for longer than the interval: the next command leaves at the end of its tick.
        loop.advanceTime(by: .microseconds(150))
        handler.submitOnLoop(request("fourth"))
        loop.run()
        #expect(try written(channel) == ["fourth"])
    }

    @Test func withoutAnIntervalEveryTickWrites() throws {
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(loop: loop)
        let handler = RedisChannelHandler(flushInterval: .zero)
        try channel.pipeline.syncOperations.addHandler(handler)
        defer { _ = try? channel.finish() }

        for command in ["first", "second", "third"] {
            handler.submitOnLoop(request(command))
            loop.run()
            #expect(try written(channel) == [command])
        }
    }
}
