import NIOCore

/// Passive outlier ejection, decided without I/O or a clock of its own (the time comes in with
/// every input, so tests drive it): `threshold` failures in a row eject a target for
/// `ejectionTime` × the number of times it has been ejected (at most ten times), while no more
/// than ``maxEjected`` targets are out at once. A success ends the run of failures. A target
/// that has been back longer than it was last out starts again from one ejection.
package struct OutlierState: Sendable {
    package struct Target: Sendable, Equatable {
        package var consecutiveFailures = 0
        package var ejections = 0
        package var ejectedUntil: NIODeadline?
        /// How long the last ejection lasted.
        package var lastEjection = TimeAmount.zero
    }

    package let threshold: Int
    package let ejectionTime: TimeAmount
    /// Targets that may be out at once: `max_ejected_percent` of them, but at least one, and
    /// none for a fleet of one (nothing would take its requests).
    package let maxEjected: Int
    package private(set) var targets: [Target]

    package init(count: Int, threshold: Int, ejectionTime: TimeAmount, maxEjectedPercent: Int) {
        self.threshold = threshold
        self.ejectionTime = ejectionTime
        maxEjected = count <= 1 || maxEjectedPercent == 0 ? 0 : max(1, count * maxEjectedPercent / 100)
        targets = Array(repeating: Target(), count: count)
    }

    package func isEjected(_ index: Int, now: NIODeadline) -> Bool {
        targets[index].ejectedUntil.map { now < $0 } ?? false
    }

    package func ejectedCount(now: NIODeadline) -> Int {
        targets.indices.count { isEjected($0, now: now) }
    }

    /// The targets out at `now`.
    package func ejected(now: NIODeadline) -> TargetSet {
        var set = TargetSet()
        for index in targets.indices where isEjected(index, now: now) { set.insert(index) }
        return set
    }

    /// The earliest time an ejected target comes back, if any is out.
    package func nextReturn(now: NIODeadline) -> NIODeadline? {
        targets.compactMap { $0.ejectedUntil }.filter { $0 > now }.min()
    }

    package mutating func succeeded(_ index: Int) {
        targets[index].consecutiveFailures = 0
    }

    /// Active checks found target `index` healthy again: an ejection ends now rather than at its
    /// time (Envoy's `successful_active_health_check_uneject_host`), so a restarted instance is
    /// back after `healthy` checks, not after a growing ejection time.
    package mutating func returned(_ index: Int) {
        targets[index].consecutiveFailures = 0
        targets[index].ejectedUntil = nil
    }

    /// A connection failure, reset or `5xx` from target `index`. Returns when the target
    /// is back if this failure ejected it.
    package mutating func failed(_ index: Int, now: NIODeadline) -> NIODeadline? {
        guard !isEjected(index, now: now) else { return nil }
        var target = targets[index]
        target.consecutiveFailures += 1
        defer { targets[index] = target }
        guard target.consecutiveFailures >= threshold, ejectedCount(now: now) < maxEjected else { return nil }
        if let until = target.ejectedUntil, now - until > target.lastEjection {
            target.ejections = 0
        }
        target.ejections = min(target.ejections + 1, 10)
        target.consecutiveFailures = 0
        target.lastEjection = ejectionTime * Int64(target.ejections)
        let until = now + target.lastEjection
        target.ejectedUntil = until
        return until
    }
}
