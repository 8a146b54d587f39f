import NIOPosix

/// The random numbers of tracing: the ids of a new trace that is not recorded, and each
/// request's sampling draw.
///
/// They must be unique and evenly spread, not unguessable (a trace id authorises nothing), so
/// they come from wyrand, seeded per thread from the kernel's CSPRNG at its first use, rather
/// than from `SystemRandomNumberGenerator`, which makes a `getrandom(2)` call per number: four
/// system calls on every request. Per thread, like `RequestID`'s counts, so that the event
/// loops share no word. Values that must be unguessable use `RandomHex`.
package struct TraceRandom: RandomNumberGenerator {
    /// A thread's wyrand state: a counter advanced by a fixed odd step. Only that thread reads
    /// or writes it (``states``).
    private final class State: @unchecked Sendable {
        var counter = UInt64.random(in: .min ... .max)
    }

    private static let states = ThreadSpecificVariable<State>()
    private let state: State

    package init() {
        state = Self.states.currentValue(madeBy: State.init)
    }

    package mutating func next() -> UInt64 {
        state.counter &+= 0xa076_1d64_78bd_642f
        let product = state.counter.multipliedFullWidth(by: state.counter ^ 0xe703_7ed1_a0b4_28db)
        return product.high ^ product.low
    }
}
