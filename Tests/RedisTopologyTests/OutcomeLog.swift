import Synchronization

/// Every response's time and status, from all clients, and when the primary was killed.
final class OutcomeLog: Sendable {
    /// The four kinds of call the clients make.
    enum Call: String, CaseIterable, Sendable {
        case login, refresh, mint, bearer
    }

    private let entries = Mutex<[(time: ContinuousClock.Instant, call: Call, status: UInt)]>([])
    private let kill = Mutex<ContinuousClock.Instant?>(nil)
    private let stopped = Atomic<Bool>(false)

    var isStopped: Bool { stopped.load(ordering: .relaxed) }
    func stop() { stopped.store(true, ordering: .relaxed) }
    var killedAt: ContinuousClock.Instant? { kill.withLock { $0 } }
    func killed(at time: ContinuousClock.Instant) { kill.withLock { $0 = time } }

    func record(at time: ContinuousClock.Instant, kind: Call, status: UInt) {
        entries.withLock { $0.append((time, kind, status)) }
    }

    /// How many calls of `kind` have been answered below 500 so far.
    func successes(of call: Call) -> Int {
        entries.withLock { $0.filter { $0.call == call && $0.status < 500 }.count }
    }

    /// Failures are 5xx answers: what Redis being away looks like to a client.
    func lastFailure() -> ContinuousClock.Instant? {
        entries.withLock { $0.last { $0.status >= 500 }?.time }
    }

    struct Summary {
        let total: Int
        let failed: Int
        let serverErrors: Int
        let byStatus: [UInt: Int]
        let byCall: [Call: CallSummary]
        /// From the kill to the first success after the last failure.
        let servingAgain: Duration?
    }

    struct CallSummary: CustomStringConvertible {
        var byStatus: [UInt: Int] = [:]
        var total: Int { byStatus.values.reduce(0, +) }
        var failed: Int { byStatus.filter { $0.key >= 500 }.values.reduce(0, +) }
        /// Whether a call of this kind succeeded after the last failure of any kind.
        var servedAgain = false

        var description: String {
            "\(total) requests, \(failed) failed (\(byStatus.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")))"
        }
    }

    func summary(after killed: ContinuousClock.Instant) -> Summary {
        let after = entries.withLock { $0.filter { $0.time >= killed } }.sorted { $0.time < $1.time }
        let failures = after.filter { $0.status >= 500 }
        let lastFailure = failures.last?.time ?? killed
        var byStatus: [UInt: Int] = [:]
        var byCall: [Call: CallSummary] = [:]
        for entry in after {
            byStatus[entry.status, default: 0] += 1
            byCall[entry.call, default: CallSummary()].byStatus[entry.status, default: 0] += 1
            if entry.time > lastFailure, entry.status < 500 { byCall[entry.call, default: CallSummary()].servedAgain = true }
        }
        let firstSuccess = after.first { $0.time > lastFailure && $0.status < 500 }?.time
        return Summary(
            total: after.count, failed: failures.count,
            serverErrors: failures.filter { $0.status != 503 }.count,
            byStatus: byStatus, byCall: byCall, servingAgain: firstSuccess.map { $0 - killed }
        )
    }
}
