import Synchronization

/// What inner middlewares and handlers learn about a request that the access line reports:
/// who the caller turned out to be, how authentication ended, how long the upstream took.
///
/// A reference shared through ``GatewayRequestContext``, because Hummingbird hands each
/// middleware its own copy of the context: what an inner one writes into the context itself
/// never reaches the access log's middleware outside it.
package final class RequestFacts: Sendable {
    package init() {}

    package struct Values {
        package var userID: String?
        package var partnerID: String?
        /// `ok`, `none`, or the refusal's error code.
        package var auth: String?
        package var upstreamDuration: Duration?
        package var bytesIn: Int?
        /// The API key's id, where one was verified (the verify API).
        package var keyID: String?
        /// The authorization listener's answer: `allowed` or `refused`.
        package var decision: String?
    }

    private let values = Mutex(Values())

    package func update(_ change: (inout Values) -> Void) {
        values.withLock { change(&$0) }
    }

    package var current: Values {
        values.withLock { $0 }
    }
}
