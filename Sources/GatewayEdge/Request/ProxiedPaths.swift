/// The paths the proxy engine takes (its route table), as the edge needs to know them: a
/// proxied request's body is timed between reads, every other body as a whole.
package protocol ProxiedPaths: Sendable {
    func takes(_ path: Substring) -> Bool
}
