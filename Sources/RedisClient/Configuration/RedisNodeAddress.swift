/// A Redis node's `host:port`: a sentinel, a cluster seed, or where a redirection points.
public struct RedisNodeAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port`, splitting at the last colon so an IPv6 host keeps its own colons.
    public init?(_ text: some StringProtocol) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else {
            return nil
        }
        let host = text[..<colon].trimmingPrefix("[")
        self.host = String(host.hasSuffix("]") ? host.dropLast() : host)
        self.port = port
    }

    public var description: String { "\(host):\(port)" }

    /// `url` with this node's host and port: its scheme, user, password and database kept.
    func url(from url: RedisURL) -> RedisURL {
        var node = url
        node.host = host
        node.port = port
        return node
    }
}
