import Synchronization

/// A value a configuration reload can replace while requests read it: every copy of the
/// struct that holds it sees the new value from the next read on.
package final class LiveValue<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    private let replacements = Atomic<Int>(0)

    package init(_ value: Value) {
        storage = Mutex(value)
    }

    package var value: Value {
        storage.withLock { $0 }
    }

    /// How many times the value was replaced, counted once the new value is in: a holder that
    /// keeps its own copy of the value reads this word, which only reloads write, on each use,
    /// and takes the (locked) value again only when it changed.
    package var version: Int {
        replacements.load(ordering: .acquiring)
    }

    package func replace(_ value: Value) {
        storage.withLock { $0 = value }
        replacements.wrappingAdd(1, ordering: .releasing)
    }
}
