import Foundation

/// Where Redis is and how to log in: `redis://[[user]:password@]host[:port][/db]`, or
/// `rediss://...` for TLS.
public struct RedisURL: Sendable, Hashable, CustomStringConvertible {
    /// `rediss://`: every connection is TLS (see ``RedisTLS``).
    public var usesTLS: Bool
    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?
    public var database: Int

    public init(
        host: String = "127.0.0.1", port: Int = 6379, username: String? = nil, password: String? = nil,
        database: Int = 0, usesTLS: Bool = false
    ) {
        self.usesTLS = usesTLS
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
    }

    public init(_ text: String) throws(RedisError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme, ["redis", "rediss"].contains(scheme) else {
            throw .invalidURL("expected redis://[user@]host:port/db or rediss:// for TLS")
        }
        self.usesTLS = scheme == "rediss"
        guard let host = components.host, !host.isEmpty else {
            throw .invalidURL("no host")
        }
        self.host = host
        self.port = components.port ?? 6379
        guard (1...65535).contains(port) else { throw .invalidURL("port out of range") }
        let user = components.user.flatMap { $0.isEmpty ? nil : $0 }
        self.username = user
        self.password = components.password.flatMap { $0.isEmpty ? nil : $0 }
        let path = components.path.drop(while: { $0 == "/" })
        if path.isEmpty {
            self.database = 0
        } else if let database = Int(path), database >= 0 {
            self.database = database
        } else {
            throw .invalidURL("database must be a number")
        }
    }

    /// The commands a new connection runs before it is used: `AUTH user password` (an ACL
    /// user, Redis 6+) or `AUTH password` (the default user), then `SELECT`.
    var handshakeCommands: [RedisCommand] {
        var commands: [RedisCommand] = []
        if let password {
            commands.append(.auth(username: username, password: password))
        } else if let username {
            // An ACL user without a password (`nopass`) still has to be named: without AUTH
            // the connection would silently run as the default user.
            commands.append(.auth(username: username, password: ""))
        }
        if database != 0 {
            commands.append(.select(database))
        }
        return commands
    }

    /// The URL with its password masked, safe for logs.
    public var description: String {
        let credentials = password == nil ? (username.map { "\($0)@" } ?? "") : "\(username ?? ""):***@"
        return "\(usesTLS ? "rediss" : "redis")://\(credentials)\(host):\(port)/\(database)"
    }
}
