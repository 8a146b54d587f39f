import NIOPosix

extension ThreadSpecificVariable {
    /// This thread's value, made by `make` and kept on the first call from a thread: what the
    /// per-thread copies that keep event loops off each other's memory (request-id counts,
    /// trace ids' generators, metric handles, access-log buffers) start from.
    package func currentValue(madeBy make: () -> Value) -> Value {
        if let value = currentValue { return value }
        let value = make()
        currentValue = value
        return value
    }
}
