/// Weighted round robin that spreads each target's turns evenly (nginx's "smooth" weighted
/// round robin: weights 1:2 go b, a, b, b, a, b rather than a, b, b, a, b, b). One per event
/// loop, so no lock on the request path; each loop's sequence is balanced on its own.
package struct SmoothRoundRobin: Sendable {
    private let weights: [Int]
    private var current: [Int]

    package init(weights: [Int]) {
        self.weights = weights
        current = Array(repeating: 0, count: weights.count)
    }

    /// The next of `eligible`, or nil when it is empty. Targets outside it neither gain nor
    /// lose turns, so the rotation resumes unchanged when they come back.
    package mutating func next(of eligible: TargetSet) -> Int? {
        var best = -1
        var total = 0
        for index in eligible.indices {
            current[index] += weights[index]
            total += weights[index]
            if best < 0 || current[index] > current[best] { best = index }
        }
        guard best >= 0 else { return nil }
        current[best] -= total
        return best
    }
}
