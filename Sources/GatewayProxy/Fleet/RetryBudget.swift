/// How many of a route's requests in flight may be retries (Envoy's retry budget): 20%, but
/// at least 3 so that a quiet route still retries. When a service fails, its requests fail
/// faster than new ones arrive; without a budget every one of them would be sent
/// `attempts` + 1 times and the retries would add to the outage.
package enum RetryBudget {
    package static let percent = 20
    package static let minimum = 3

    /// Whether one more retry may start while `retries` retries and `requests` requests
    /// (retries included) are in flight.
    package static func allows(retries: Int, requests: Int) -> Bool {
        retries < max(minimum, requests * percent / 100)
    }
}
