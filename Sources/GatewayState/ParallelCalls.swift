/// Runs one call per item, `width` at a time, in the items' order; after a call fails none
/// starts, and the calls under way finish. Export reads and apply writes go through here, so a
/// thousand partners' calls take the time of about a thousand divided by `width` round trips.
enum ParallelCalls {
    /// Each item's outcome at its index; nil for an item not started because a call failed.
    /// Each task takes its index and item by value: a nested function capturing the loop's
    /// counters came out wrong in release builds (docs/DECISIONS.md, "Partners as code: tested
    /// with the release build too").
    static func run<Item: Sendable, Value: Sendable>(
        _ items: [Item], width: Int, _ call: @escaping @Sendable (Item) async throws -> Value
    ) async -> [Result<Value, any Error>?] {
        await withTaskGroup(of: Finished<Value>.self) { group in
            var results = [Result<Value, any Error>?](repeating: nil, count: items.count)
            var next = 0
            var running = 0
            var failed = false
            while true {
                while !failed, next < items.count, running < max(1, width) {
                    group.addTask { [index = next, item = items[next]] in
                        do {
                            return Finished(index: index, result: .success(try await call(item)))
                        } catch {
                            return Finished(index: index, result: .failure(error))
                        }
                    }
                    next += 1
                    running += 1
                }
                guard let finished = await group.next() else { break }
                running -= 1
                results[finished.index] = finished.result
                if case .failure = finished.result { failed = true }
            }
            return results
        }
    }

    /// A call's outcome, as its task answers it.
    private struct Finished<Value: Sendable>: Sendable {
        let index: Int
        let result: Result<Value, any Error>
    }
}
