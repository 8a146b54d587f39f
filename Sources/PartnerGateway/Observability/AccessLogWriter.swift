import Dispatch
import Foundation
import Metrics
import Synchronization

/// The access log: lines gathered in memory and written by a thread of their own, the way
/// nginx's `access_log ... buffer=64k flush=1s` works.
///
/// A request's only cost is formatting its line into the buffer under a short lock; the
/// `write(2)` happens on the flusher thread, never on an event loop. The buffer is written
/// when it holds ``flushBytes``, at least every `flushInterval` (1 s), and at shutdown. If the
/// output cannot keep up, lines beyond ``maxPendingBytes`` are dropped and counted in
/// `gateway_access_log_dropped_total` rather than holding requests or growing memory.
final class AccessLogWriter: Sendable {
    static let flushBytes = 64 * 1024
    static let maxPendingBytes = 4 * 1024 * 1024

    private struct State {
        var filling: [UInt8] = []
        /// The buffer the flusher last emptied, kept for reuse so that no batch allocates.
        var spare: [UInt8] = []
        /// The flusher has been woken for a full buffer and has not taken it yet.
        var wakeupPending = false
        var stopping = false
        var second = JSONLine.Second()
    }

    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    private let format: GatewayConfig.Log.Format
    /// `log.access_log`, which a configuration reload can switch.
    private let enabled: Atomic<Bool>
    private let output: LogOutput
    private let flushInterval: DispatchTimeInterval
    private let dropped = Counter(label: "gateway_access_log_dropped_total")

    /// Starts the flusher thread.
    init(
        format: GatewayConfig.Log.Format, enabled: Bool = true, output: LogOutput = .standardError,
        flushInterval: DispatchTimeInterval = .seconds(1)
    ) {
        self.format = format
        self.enabled = Atomic(enabled)
        self.output = output
        self.flushInterval = flushInterval
        state.withLock { $0.filling.reserveCapacity(Self.flushBytes * 2) }
        Thread.detachNewThread { [self] in
            // A new thread keeps its creator's name (an event loop's, here), which would make
            // it pass for one in `top -H` and in anything that counts the loops.
            // (`pthread_setname_np` is not visible to Swift on Linux; /proc is the same call.)
            try? "access-log".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            flushUntilStopped()
        }
    }

    /// Adds `record`'s line. Safe from any thread; never blocks on the output.
    func record(_ record: AccessLogRecord) {
        guard enabled.load(ordering: .relaxed) else { return }
        let format = self.format
        let outcome = state.withLock { state -> Outcome in
            guard !state.stopping else { return .added }
            guard state.filling.count < Self.maxPendingBytes else { return .dropped }
            record.write(to: &state.filling, format: format, second: &state.second)
            guard state.filling.count >= Self.flushBytes, !state.wakeupPending else { return .added }
            state.wakeupPending = true
            return .addedFull
        }
        switch outcome {
        case .added: break
        case .addedFull: wakeup.signal()
        case .dropped: dropped.increment()
        }
    }

    private enum Outcome {
        case added
        /// The buffer reached ``flushBytes``: the flusher is woken.
        case addedFull
        case dropped
    }

    /// Turns the access log on or off (a configuration reload).
    func setEnabled(_ isEnabled: Bool) {
        enabled.store(isEnabled, ordering: .relaxed)
    }

    /// Writes what is buffered and stops the flusher; later records are ignored. Blocks until
    /// the last batch is written, so call it once the listeners have drained.
    func shutdown() {
        let first = state.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        wakeup.signal()
        stopped.wait()
    }

    private func flushUntilStopped() {
        while true {
            _ = wakeup.wait(timeout: .now() + flushInterval)
            var batch: [UInt8] = []
            let stopping = state.withLock { state -> Bool in
                swap(&batch, &state.spare)
                swap(&batch, &state.filling)
                state.wakeupPending = false
                return state.stopping
            }
            output.write(batch)
            batch.removeAll(keepingCapacity: true)
            state.withLock { $0.spare = batch }
            if stopping {
                stopped.signal()
                return
            }
        }
    }
}
