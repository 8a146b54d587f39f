/// Waits for a condition that some other process makes true (a port opening, a cache
/// being invalidated), checking every `interval`, and gives up after `timeout`.
///
/// Returns how long it took, so a test can assert on it (e.g. "within 1 s").
@discardableResult
public func eventually(
    timeout: Duration = .seconds(5),
    interval: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async throws -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    while true {
        do {
            if try await condition() { return clock.now - start }
        } catch let error as any FinalFailure {
            throw error
        } catch {
            // Not yet: a port still closed, a reply not yet there.
        }
        if clock.now - start > timeout {
            throw TimedOut(waited: timeout)
        }
        try await Task.sleep(for: interval)
    }
}

public struct TimedOut: Error, CustomStringConvertible {
    public let waited: Duration
    public var description: String { "condition not met within \(waited)" }
}

/// What a condition throws when waiting longer is pointless (the process it waits for
/// exited): `eventually` throws it at once, where any other error only means "not yet".
public protocol FinalFailure: Error {}
