/// `least_request`: of two targets drawn at random from the eligible ones, the one with fewer
/// requests in flight per unit of weight (Envoy's "power of two choices"). Two draws instead of
/// a scan keep every loop from piling onto the one target that looked least loaded a moment
/// ago, and cost the same for any number of targets.
package enum LeastRequestChoice {
    /// `load(i)` is target i's requests in flight; ties go to the first draw.
    package static func pick(
        of eligible: TargetSet, weights: [Int], load: (Int) -> Int, using generator: inout some RandomNumberGenerator
    ) -> Int? {
        let count = eligible.count
        guard count > 0 else { return nil }
        guard count > 1 else { return eligible.member(0) }
        let first = Int.random(in: 0..<count, using: &generator)
        var second = Int.random(in: 0..<(count - 1), using: &generator)
        if second >= first { second += 1 }
        let (a, b) = (eligible.member(first), eligible.member(second))
        // load(a) / weight(a) <= load(b) / weight(b), without division.
        return load(a) * weights[b] <= load(b) * weights[a] ? a : b
    }
}
