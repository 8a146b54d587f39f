@testable import GatewayServer
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

/// ``ConnectionDrain``: a listener's graceful shutdown waits for every connection through one
/// task, the others' tasks ending at once.
@Suite("Connection drain without a task per connection")
struct ConnectionDrainTests {
    final class Flag: Sendable {
        private let value = Atomic(false)
        var raised: Bool { value.load(ordering: .relaxed) }
        func raise() { value.store(true, ordering: .relaxed) }
    }

    /// Closes `channel` and runs its loop, so close callbacks run. The async testing channel,
    /// not `EmbeddedChannel`: these tests await, and may resume on another thread.
    private static func close(_ channel: NIOAsyncTestingChannel) async throws {
        try await channel.close()
        await channel.testingEventLoop.run()
    }

    @Test func oneTaskWaitsForEveryConnectionAndTheOthersReturnAtOnce() async throws {
        let drain = ConnectionDrain()
        let first = NIOAsyncTestingChannel(), second = NIOAsyncTestingChannel()
        drain.opened(first, releasesMemory: false)
        drain.opened(second, releasesMemory: false)
        let done = Flag()
        let waiter = Task {
            await drain.waitUnlessWaited()
            done.raise()
        }
        while !drain.isWaited { await Task.yield() }
        await drain.waitUnlessWaited()  // another connection's task: returns at once
        try await Self.close(first)
        for _ in 0..<20 { await Task.yield() }
        #expect(!done.raised, "the waiting task returned with a connection still open")
        try await Self.close(second)
        await waiter.value
        #expect(!drain.isWaited)

        // Once none is open, the next connection's task waits again.
        let third = NIOAsyncTestingChannel()
        drain.opened(third, releasesMemory: false)
        let again = Task { await drain.waitUnlessWaited() }
        while !drain.isWaited { await Task.yield() }
        try await Self.close(third)
        await again.value
    }

    @Test func aTaskComingAfterItsConnectionClosedDoesNotWait() async throws {
        let drain = ConnectionDrain()
        let channel = NIOAsyncTestingChannel()
        drain.opened(channel, releasesMemory: false)
        try await Self.close(channel)
        await drain.waitUnlessWaited()
        #expect(!drain.isWaited)
    }
}
