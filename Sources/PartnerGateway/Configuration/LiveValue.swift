import Synchronization

/// A value a configuration reload can replace while requests read it: every copy of the
/// struct that holds it sees the new value from the next read on.
final class LiveValue<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) {
        storage = Mutex(value)
    }

    var value: Value {
        storage.withLock { $0 }
    }

    func replace(_ value: Value) {
        storage.withLock { $0 = value }
    }
}
