import NIOPosix
import Synchronization

/// Metric handles by label values, made once per label set and reused, read on every request
/// without a lock: each thread keeps its own copy of the handles it has used, and the last
/// one. A table shared under one lock would cost every request a lock and a hash, on memory
/// every event loop writes; a keep-alive connection asks for the same labels every time, so
/// the last handle is one comparison away.
///
/// Each table holds a thread-specific key, and a process has a limited number of those (1024
/// on Linux): make tables per listener or per process, never per route or per request.
package final class MetricHandleTable<Labels: Hashable & Sendable, Handle: Sendable>: Sendable {
    private let make: @Sendable (Labels) -> Handle
    private let shared = Mutex([Labels: Handle]())
    private let threadCopies = ThreadSpecificVariable<ThreadCopy>()

    /// Only the thread it belongs to reads or writes it (``threadCopies``).
    private final class ThreadCopy: @unchecked Sendable {
        package var lastLabels: Labels?
        package var lastHandle: Handle?
        package var handles: [Labels: Handle] = [:]
    }

    /// `make` asks the metrics factory for the handle of a label set seen for the first time.
    package init(make: @escaping @Sendable (Labels) -> Handle) {
        self.make = make
    }

    package func handle(for labels: Labels) -> Handle {
        let copy = threadCopies.currentValue(madeBy: ThreadCopy.init)
        if let lastHandle = copy.lastHandle, copy.lastLabels == labels { return lastHandle }
        let handle = copy.handles[labels] ?? sharedHandle(for: labels)
        copy.handles[labels] = handle
        copy.lastLabels = labels
        copy.lastHandle = handle
        return handle
    }

    /// The one handle of `labels` every thread shares (made under the lock, so only once).
    private func sharedHandle(for labels: Labels) -> Handle {
        shared.withLock { handles in
            if let handle = handles[labels] { return handle }
            let handle = make(labels)
            handles[labels] = handle
            return handle
        }
    }
}
