import NIOCore
import NIOPosix
import Testing

@testable import GatewayEdge

/// ``EventLoopTaskExecutor``: a task that prefers it runs on its loop, from start to end,
/// whichever loop completes what it awaits.
@Suite("Tasks on their connection's event loop")
struct EventLoopTaskExecutorTests {
    @Test("a task and its child tasks run on the preferred loop, also after another loop woke them")
    func staysOnItsLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let home = group.next()
        let other = group.next()
        #expect(home !== other)

        let seen = try await Task(executorPreference: EventLoopTaskExecutor(home)) {
            var seen = [home.inEventLoop]
            // Completed on the other loop: the task resumes on its own.
            let value = try await other.submit { other.inEventLoop ? 1 : 0 }.get()
            seen.append(value == 1 && home.inEventLoop)
            async let child = home.inEventLoop
            seen.append(await child)
            let inGroup = await withTaskGroup(of: Bool.self) { tasks in
                tasks.addTask { home.inEventLoop }
                return await tasks.next() ?? false
            }
            seen.append(inGroup)
            return seen
        }.value
        try await group.shutdownGracefully()
        #expect(seen == [true, true, true, true])
    }
}
