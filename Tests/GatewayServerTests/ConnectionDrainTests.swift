@testable import GatewayServer
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

/// ``ConnectionDrain``: a listener's graceful shutdown tells every open connection, and every
/// one that becomes ready later, to wind down, and waits until none is open.
@Suite("Connection drain")
struct ConnectionDrainTests {
    final class Flag: Sendable {
        private let value = Atomic(false)
        var raised: Bool { value.load(ordering: .relaxed) }
        func raise() { value.store(true, ordering: .relaxed) }
    }

    /// Counts the drain's events reaching a connection.
    final class QuiesceCounter: ChannelInboundHandler, Sendable {
        typealias InboundIn = Never
        private let count = Atomic(0)
        var events: Int { count.load(ordering: .relaxed) }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if event is ChannelShouldQuiesceEvent { count.add(1, ordering: .relaxed) }
        }
    }

    /// Closes `channel` and runs its loop, so close callbacks run. The async testing channel,
    /// not `EmbeddedChannel`: these tests await, and may resume on another thread.
    private static func close(_ channel: NIOAsyncTestingChannel) async throws {
        try await channel.close()
        await channel.testingEventLoop.run()
    }

    private static func channel(counting counter: QuiesceCounter) async throws -> NIOAsyncTestingChannel {
        let channel = NIOAsyncTestingChannel()
        try await channel.pipeline.addHandler(counter)
        return channel
    }

    @Test func theDrainTellsEveryConnectionAndWaitsUntilNoneIsOpen() async throws {
        let drain = ConnectionDrain()
        let firstCounter = QuiesceCounter(), secondCounter = QuiesceCounter()
        let first = try await Self.channel(counting: firstCounter), second = try await Self.channel(counting: secondCounter)
        drain.opened(first)
        drain.opened(second)
        drain.ready(first)
        #expect(firstCounter.events == 0, "told before the drain")
        drain.begin()
        await first.testingEventLoop.run()
        await second.testingEventLoop.run()
        #expect(firstCounter.events == 1 && secondCounter.events == 1)
        #expect(drain.isDraining)

        let done = Flag()
        let waiter = Task {
            await drain.allClosed()
            done.raise()
        }
        try await Self.close(first)
        for _ in 0..<20 { await Task.yield() }
        #expect(!done.raised, "the drain ended with a connection still open")
        try await Self.close(second)
        await waiter.value
        #expect(done.raised)
    }

    /// A connection accepted while the drain is under way is told once its handlers are in place.
    @Test func aConnectionReadyDuringTheDrainIsToldThen() async throws {
        let drain = ConnectionDrain()
        drain.begin()
        let counter = QuiesceCounter()
        let late = try await Self.channel(counting: counter)
        drain.opened(late)
        #expect(counter.events == 0)
        drain.ready(late)
        await late.testingEventLoop.run()
        #expect(counter.events == 1)
        drain.closeAll()
        await late.testingEventLoop.run()
        await drain.allClosed()
        #expect(!late.isActive)
    }

    @Test func withNoConnectionTheDrainEndsAtOnce() async {
        let drain = ConnectionDrain()
        drain.begin()
        await drain.allClosed()
    }
}
