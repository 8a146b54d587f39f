import NIOCore

/// A task executor that runs a task's jobs on one event loop: the executor preference of the
/// tasks that answer the gateway's own endpoints (`EndpointResponder`, one task per request).
///
/// Why: with NIO's loops as Swift's global executor, NIO runs a global job as if on the loop's
/// serial executor, so nonisolated code resumed after each Redis reply or body read must hop
/// again, to the generic executor: a second job on the same loop for every suspension. A job
/// run here runs on the generic executor with this one as its task executor, which is what such
/// code asks for, so it goes on without that hop; a default actor (jwt-kit's key collection)
/// is taken over on the loop instead of enqueued (docs/DECISIONS.md, "Endpoint tasks prefer
/// their connection's event loop").
public final class EventLoopTaskExecutor: TaskExecutor {
    public let eventLoop: any EventLoop

    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
