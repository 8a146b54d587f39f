import Dispatch
import Foundation
import Metrics
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Where log lines go: a file descriptor written with whole `write(2)` calls, one writer at a
/// time.
///
/// The log handlers' lines are handed over (``post(_:)``) and written by a queue of their
/// own, in batches gathered for a few milliseconds, so an event loop never waits on the
/// output: standard error is often a pipe to a log shipper, and a stalled reader would
/// otherwise stop every loop that logs (an upstream outage logs a line per request). The access log's flusher, already on its own thread, writes
/// directly (``write(_:)``), after whatever lines were posted before it.
///
/// The write lock keeps a line from landing inside a 64 KiB batch when the output is a pipe
/// (where writes above `PIPE_BUF` are not atomic).
package final class LogOutput: Sendable {
    /// Posted bytes beyond this wait for nothing: they are dropped and counted in
    /// `gateway_log_lines_dropped_total`, rather than holding requests or growing memory.
    package static let maxPendingBytes = 4 * 1024 * 1024
    /// How long the queue gathers posted lines before writing them: one wake-up of its thread
    /// per batch, not per line (on a busy gateway that wake-up would cost more than the write).
    package static let gatherInterval = DispatchTimeInterval.milliseconds(5)

    /// The descriptor, locked by whoever writes to it.
    private let descriptor: Mutex<Int32>
    private let pending = Mutex(Pending())
    private let queue = DispatchQueue(label: "log-output")

    private struct Pending {
        var bytes: [UInt8] = []
        /// A write of the posted bytes is scheduled and has not taken them yet.
        var writeQueued = false
    }

    package init(descriptor: Int32) {
        self.descriptor = Mutex(descriptor)
    }

    package static let standardError = LogOutput(descriptor: STDERR_FILENO)

    /// Hands `bytes` (whole lines) to the output's queue; never waits on the output.
    package func post(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        let outcome = pending.withLock { pending -> Outcome in
            guard pending.bytes.count + bytes.count <= Self.maxPendingBytes else { return .dropped }
            pending.bytes.append(contentsOf: bytes)
            if pending.writeQueued { return .added }
            pending.writeQueued = true
            return .addedFirst
        }
        switch outcome {
        case .added: break
        case .addedFirst: queue.asyncAfter(deadline: .now() + Self.gatherInterval) { self.flush() }
        case .dropped: GatewayMetrics.counter("gateway_log_lines_dropped_total").increment()
        }
    }

    private enum Outcome {
        case added
        /// The first bytes since the last write: one is scheduled.
        case addedFirst
        case dropped
    }

    /// Writes the posted bytes, then `bytes`, before returning.
    package func write(_ bytes: [UInt8]) {
        descriptor.withLock { descriptor in
            Self.write(takePending(), to: descriptor)
            Self.write(bytes, to: descriptor)
        }
    }

    /// Writes the posted bytes before returning: the process calls it before it exits.
    package func flush() {
        write([])
    }

    private func takePending() -> [UInt8] {
        pending.withLock { pending in
            pending.writeQueued = false
            var taken: [UInt8] = []
            swap(&taken, &pending.bytes)
            return taken
        }
    }

    /// Writes all of `bytes`, retrying short writes and interruptions; an output that fails
    /// (closed, full disk) loses the bytes rather than stopping the gateway.
    private static func write(_ bytes: [UInt8], to descriptor: Int32) {
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Foundation.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}
