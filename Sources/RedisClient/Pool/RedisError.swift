/// Why a Redis command did not produce a reply.
///
/// A struct around a private code, so new cases can be added without breaking callers,
/// and `description` is stable enough to log and to match in alerts. Server errors carry
/// Redis's own message (`NOSCRIPT ...`, `OOM ...`), which never contains a command argument.
public struct RedisError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case connection
        case timeout
        case server
        case protocolViolation
        case poolClosed
        case invalidURL
        case tls
        case crossSlot
    }

    private let code: Code
    /// Extra detail: the server's message or what went wrong with the connection.
    public let detail: String

    private init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// The server could not be reached, or the connection broke before the reply arrived.
    public static func connection(_ detail: String) -> RedisError { .init(.connection, detail) }
    /// No reply within the command deadline (`redis.timeout`).
    public static func timeout(_ detail: String) -> RedisError { .init(.timeout, detail) }
    /// Redis answered with an error reply.
    public static func server(_ message: String) -> RedisError { .init(.server, message) }
    /// The bytes from the server were not RESP.
    public static func protocolViolation(_ detail: String) -> RedisError { .init(.protocolViolation, detail) }
    /// The pool was shut down.
    public static let poolClosed = RedisError(.poolClosed, "the connection pool is shut down")
    /// A `redis://` URL that could not be understood.
    public static func invalidURL(_ detail: String) -> RedisError { .init(.invalidURL, detail) }
    /// TLS could not be set up, or the server's certificate was refused (untrusted, or not
    /// for this host name): a configuration problem no retry fixes.
    public static func tls(_ detail: String) -> RedisError { .init(.tls, detail) }

    /// A transaction or pipeline that must run on one node named keys of several cluster
    /// slots: a programming error, refused before anything is sent.
    public static func crossSlot(_ detail: String) -> RedisError { .init(.crossSlot, detail) }

    public var isConnection: Bool { code == .connection || code == .poolClosed || code == .tls }
    public var isTLS: Bool { code == .tls }
    /// Redis refused the credentials (`WRONGPASS`) or wants some (`NOAUTH`).
    public var isAuthentication: Bool {
        code == .server && (detail.hasPrefix("WRONGPASS") || detail.hasPrefix("NOAUTH") || detail.hasPrefix("ERR AUTH"))
    }
    /// A replica refused a write: the node was a primary and has been demoted.
    public var isReadOnly: Bool { code == .server && detail.hasPrefix("READONLY") }
    /// The command or key is outside what the ACL user may touch.
    public var isPermissionDenied: Bool { code == .server && detail.hasPrefix("NOPERM") }
    public var isTimeout: Bool { code == .timeout }
    public var isServer: Bool { code == .server }
    /// Redis lost the script cache (restart or `SCRIPT FLUSH`).
    public var isNoScript: Bool { code == .server && detail.hasPrefix("NOSCRIPT") }
    /// A cluster node's `MOVED`, `ASK`, `TRYAGAIN` or `CLUSTERDOWN`: the command did not run
    /// there and belongs elsewhere or later (``RedisRedirection``).
    public var isClusterRedirection: Bool {
        code == .server && ["MOVED ", "ASK ", "TRYAGAIN", "CLUSTERDOWN"].contains { detail.hasPrefix($0) }
    }

    public var description: String {
        switch code {
        case .connection: "redis connection error: \(detail)"
        case .timeout: "redis timeout: \(detail)"
        case .server: "redis server error: \(detail)"
        case .protocolViolation: "redis protocol error: \(detail)"
        case .poolClosed: "redis pool closed"
        case .invalidURL: "invalid redis url: \(detail)"
        case .tls: "redis TLS error: \(detail)"
        case .crossSlot: "redis cross-slot call: \(detail)"
        }
    }
}
