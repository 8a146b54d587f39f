import Synchronization

/// What a test's ``RedisSubscriber`` saw: when each reset ran, and every message.
final class SubscriberEvents: Sendable {
    private struct State {
        var resetTimes: [ContinuousClock.Instant] = []
        var messages: [String] = []
    }

    private let state = Mutex(State())

    func reset() { state.withLock { $0.resetTimes.append(.now) } }
    func message(_ payload: String) { state.withLock { $0.messages.append(payload) } }

    var resets: Int { state.withLock { $0.resetTimes.count } }
    var resetTimes: [ContinuousClock.Instant] { state.withLock { $0.resetTimes } }
    var messages: [String] { state.withLock { $0.messages } }
}
