/// One target's active-check record: `unhealthy` failed checks in a row take it out,
/// `healthy` passed checks in a row bring it back. Targets start healthy, so a gateway that
/// starts while checks are still to run sends traffic as before.
package struct HealthVerdict: Sendable, Equatable {
    package let healthyThreshold: Int
    package let unhealthyThreshold: Int
    package private(set) var isHealthy = true
    private var streak = 0

    package init(healthy: Int, unhealthy: Int) {
        healthyThreshold = healthy
        unhealthyThreshold = unhealthy
    }

    /// A check's result; returns whether the verdict changed.
    package mutating func record(passed: Bool) -> Bool {
        // The streak counts checks against the current verdict only.
        if passed == isHealthy {
            streak = 0
            return false
        }
        streak += 1
        guard streak >= (isHealthy ? unhealthyThreshold : healthyThreshold) else { return false }
        isHealthy.toggle()
        streak = 0
        return true
    }
}
