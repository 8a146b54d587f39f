import Synchronization

/// One instance of a route's upstream service: its address, its connections and its share.
package final class UpstreamTarget: Sendable {
    /// Its place in the fleet (bit `index` of a ``TargetSet``).
    package let index: Int
    /// The URL as configured, for logs and the access log's `upstream`.
    package let url: String
    /// `host:port`, the upstream request's `Host`.
    package let authority: String
    package let weight: Int
    /// The keep-alive connections to `authority`, shared by every route naming it.
    package let pool: UpstreamPool
    /// Requests sent to it and not finished (kept for `least_request` only).
    package let inFlight = Atomic<Int>(0)

    package init(index: Int, url: String, authority: String, weight: Int, pool: UpstreamPool) {
        self.index = index
        self.url = url
        self.authority = authority
        self.weight = weight
        self.pool = pool
    }
}
