import Metrics

/// `gateway_cache_lookups_total{cache,result}`: how often the in-process caches answer
/// without Redis or a signature (hit) and how often they cannot (miss). A falling hit rate
/// after a deploy or an invalidation storm shows up here before it shows up as latency.
package struct CacheMetrics: Sendable {
    /// Verified API keys (``KeyVerifier``).
    package static let key = CacheMetrics("key")
    /// Verified access tokens.
    package static let token = CacheMetrics("token")
    /// Signed `X-Gateway-Assertion`s.
    package static let assertion = CacheMetrics("assertion")

    private let hits: Counter
    private let misses: Counter

    private init(_ cache: String) {
        hits = Counter(label: "gateway_cache_lookups_total", dimensions: [("cache", cache), ("result", "hit")])
        misses = Counter(label: "gateway_cache_lookups_total", dimensions: [("cache", cache), ("result", "miss")])
    }

    /// Makes every cache's series, at zero.
    package static func exportAll() {
        _ = [key, token, assertion]
    }

    package func hit() { hits.increment() }
    package func miss() { misses.increment() }

    package func record(hit: Bool) {
        hit ? hits.increment() : misses.increment()
    }
}
