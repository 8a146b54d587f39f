import Dispatch
import Foundation
import GatewayConfiguration
import Metrics
import NIOPosix
import Synchronization

/// The access log: lines gathered in memory and written by a thread of their own, the way
/// nginx's `access_log ... buffer=64k flush=1s` works.
///
/// A request's only cost is formatting its line into a buffer of its own thread's (each event
/// loop has one, as each nginx worker has its own buffer), under a lock no other request
/// thread takes: one buffer shared by the event loops would make them wait for each other's
/// formatting and pass its memory between cores on every request. The
/// `write(2)` happens on the flusher thread, never on an event loop. A thread's buffer is
/// written when it holds ``flushBytes``, and every buffer at least every `flushInterval` (1 s)
/// and at shutdown; so lines of one thread stay in order, and lines of different threads are
/// in order within a second or a buffer, like those of nginx's workers. If the output cannot
/// keep up, a thread's lines beyond ``maxPendingBytes`` are dropped and counted in
/// `gateway_access_log_dropped_total` rather than holding requests or growing memory.
package final class AccessLogWriter: Sendable {
    package static let flushBytes = 64 * 1024
    package static let maxPendingBytes = 4 * 1024 * 1024

    /// One recording thread's lines.
    private final class Buffer: Sendable {
        package struct Lines {
            package var filling: [UInt8] = []
            /// The bytes the flusher last emptied, kept for reuse so that no batch allocates.
            package var spare: [UInt8] = []
            package var second = JSONLine.Second()
        }

        package let lines = Mutex(Lines())

        package init() {
            lines.withLock { $0.filling.reserveCapacity(AccessLogWriter.flushBytes * 2) }
        }
    }

    /// Every thread's buffer, made at its first line (event loops and the few threads the
    /// gateway's own endpoints run on live as long as the process).
    private let buffers = Mutex<[Buffer]>([])
    private let threadBuffer = ThreadSpecificVariable<Buffer>()
    /// The flusher has been woken for a full buffer and has not emptied the buffers yet.
    private let wakeupPending = Atomic(false)
    private let stopping = Atomic(false)
    private let wakeup = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    private let format: GatewayConfig.Log.Format
    /// `log.access_log`, which a configuration reload can switch.
    private let enabled: Atomic<Bool>
    private let output: LogOutput
    private let flushInterval: DispatchTimeInterval
    private let dropped = Counter(label: "gateway_access_log_dropped_total")

    /// Starts the flusher thread.
    package init(
        format: GatewayConfig.Log.Format, enabled: Bool = true, output: LogOutput = .standardError,
        flushInterval: DispatchTimeInterval = .seconds(1)
    ) {
        self.format = format
        self.enabled = Atomic(enabled)
        self.output = output
        self.flushInterval = flushInterval
        Thread.detachNewThread { [self] in
            // A new thread keeps its creator's name (an event loop's, here), which would make
            // it pass for one in `top -H` and in anything that counts the loops.
            // (`pthread_setname_np` is not visible to Swift on Linux; /proc is the same call.)
            try? "access-log".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            flushUntilStopped()
        }
    }

    /// Adds `record`'s line. Safe from any thread; never blocks on the output.
    package func record(_ record: AccessLogRecord) {
        guard enabled.load(ordering: .relaxed), !stopping.load(ordering: .relaxed) else { return }
        let format = self.format
        let outcome = currentBuffer().lines.withLock { lines -> Outcome in
            guard lines.filling.count < Self.maxPendingBytes else { return .dropped }
            record.write(to: &lines.filling, format: format, second: &lines.second)
            return lines.filling.count >= Self.flushBytes ? .addedFull : .added
        }
        switch outcome {
        case .added: break
        case .addedFull: if !wakeupPending.exchange(true, ordering: .acquiringAndReleasing) { wakeup.signal() }
        case .dropped: dropped.increment()
        }
    }

    private enum Outcome {
        case added
        /// The buffer reached ``flushBytes``: the flusher is woken.
        case addedFull
        case dropped
    }

    /// This thread's buffer, made at its first line.
    private func currentBuffer() -> Buffer {
        threadBuffer.currentValue(madeBy: {
            let buffer = Buffer()
            buffers.withLock { $0.append(buffer) }
            return buffer
        })
    }

    /// Turns the access log on or off (a configuration reload).
    package func setEnabled(_ isEnabled: Bool) {
        enabled.store(isEnabled, ordering: .relaxed)
    }

    /// Writes what is buffered and stops the flusher; later records are ignored. Blocks until
    /// the last batch is written, so call it once the listeners have drained.
    package func shutdown() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wakeup.signal()
        stopped.wait()
    }

    private func flushUntilStopped() {
        var batch: [UInt8] = []
        while true {
            _ = wakeup.wait(timeout: .now() + flushInterval)
            wakeupPending.store(false, ordering: .releasing)
            let stopping = self.stopping.load(ordering: .acquiring)
            for buffer in buffers.withLock({ $0 }) {
                // The lines out, the spare bytes in as the thread's new buffer; once written,
                // the emptied bytes go back as its spare.
                buffer.lines.withLock { lines in
                    swap(&batch, &lines.spare)
                    swap(&batch, &lines.filling)
                }
                if !batch.isEmpty { output.write(batch) }
                batch.removeAll(keepingCapacity: true)
                buffer.lines.withLock { swap(&batch, &$0.spare) }
            }
            if stopping {
                stopped.signal()
                return
            }
        }
    }
}
