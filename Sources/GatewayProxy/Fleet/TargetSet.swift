/// A set of a fleet's targets by index (a fleet has at most 64): the ones a balancer may pick,
/// the ones a request has tried. A bit mask, so picking allocates nothing.
package struct TargetSet: Sendable, Hashable {
    package var bits: UInt64

    package init(bits: UInt64 = 0) { self.bits = bits }

    /// Targets `0..<count`.
    package static func all(_ count: Int) -> TargetSet {
        TargetSet(bits: count >= 64 ? .max : (UInt64(1) << UInt64(count)) - 1)
    }

    package var isEmpty: Bool { bits == 0 }
    package var count: Int { bits.nonzeroBitCount }

    package func contains(_ index: Int) -> Bool { bits & (UInt64(1) << UInt64(index)) != 0 }
    package mutating func insert(_ index: Int) { bits |= UInt64(1) << UInt64(index) }
    package mutating func remove(_ index: Int) { bits &= ~(UInt64(1) << UInt64(index)) }
    package func subtracting(_ other: TargetSet) -> TargetSet { TargetSet(bits: bits & ~other.bits) }

    /// The index of the `n`th member (from 0), in increasing order.
    package func member(_ n: Int) -> Int {
        var rest = bits
        for _ in 0..<n { rest &= rest - 1 }
        return rest.trailingZeroBitCount
    }

    /// The members in increasing order.
    package var indices: some Sequence<Int> {
        sequence(state: bits) { rest -> Int? in
            guard rest != 0 else { return nil }
            let index = rest.trailingZeroBitCount
            rest &= rest - 1
            return index
        }
    }
}
