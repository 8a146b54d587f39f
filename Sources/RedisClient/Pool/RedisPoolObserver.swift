/// Callbacks a ``RedisConnectionPool`` makes so that its user can measure it (latency,
/// errors, connections) without this module depending on a metrics library.
///
/// They run on the calling task or on an event loop: they must return quickly.
public struct RedisPoolObserver: Sendable {
    /// A call is about to be sent.
    public var started: @Sendable () -> Void
    /// A command (`name`) or pipeline (its first command's name) ended after `duration`,
    /// with `error` when it failed (an error reply counts as a response).
    public var finished: @Sendable (_ name: String, _ duration: Duration, _ error: RedisError?) -> Void
    /// A Lua script run ended (including a resend of its source).
    public var scriptFinished: @Sendable (_ script: String, _ duration: Duration, _ failed: Bool) -> Void
    /// A connection attempt ended: `succeeded` false for a refused or timed-out dial.
    public var dialed: @Sendable (_ succeeded: Bool) -> Void
    /// A cluster node redirected a command (`MOVED` or `ASK`), which was then sent again.
    public var redirected: @Sendable (_ kind: Redirection) -> Void

    public enum Redirection: String, Sendable {
        case moved, ask
    }

    public init(
        started: @escaping @Sendable () -> Void,
        finished: @escaping @Sendable (_ name: String, _ duration: Duration, _ error: RedisError?) -> Void,
        scriptFinished: @escaping @Sendable (_ script: String, _ duration: Duration, _ failed: Bool) -> Void,
        dialed: @escaping @Sendable (_ succeeded: Bool) -> Void,
        redirected: @escaping @Sendable (_ kind: Redirection) -> Void = { _ in }
    ) {
        self.redirected = redirected
        self.started = started
        self.finished = finished
        self.scriptFinished = scriptFinished
        self.dialed = dialed
    }
}
