/// The paths the proxy engine takes (its route table), as the edge needs to know them: a
/// proxied request's body is timed between reads, every other body as a whole.
package protocol ProxiedPaths: Sendable {
    func takes(_ path: Substring) -> Bool

    /// A prefix below which a path is another request's own (the authorization listener's
    /// `/forward`, after which Envoy appends the path it asks about): that part is made
    /// canonical on its own, so its `..` cannot climb out of the prefix (``RequestHeadRules``).
    var anchoredPrefix: String? { get }
}

extension ProxiedPaths {
    package var anchoredPrefix: String? { nil }
}
