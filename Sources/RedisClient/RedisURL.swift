import Foundation

/// Where Redis is and how to log in: `redis://[[user]:password@]host[:port][/db]`.
public struct RedisURL: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?
    public var database: Int

    public init(host: String = "127.0.0.1", port: Int = 6379, username: String? = nil, password: String? = nil, database: Int = 0) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
    }

    public init(_ text: String) throws(RedisError) {
        guard let components = URLComponents(string: text), components.scheme == "redis" else {
            throw .invalidURL("expected redis://[:password@]host:port/db")
        }
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

    /// The commands a new connection runs before it is used.
    var handshakeCommands: [RedisCommand] {
        var commands: [RedisCommand] = []
        if let password {
            if let username {
                commands.append(RedisCommand("AUTH", username, password))
            } else {
                commands.append(RedisCommand("AUTH", password))
            }
        }
        if database != 0 {
            commands.append(RedisCommand("SELECT", String(database)))
        }
        return commands
    }

    /// The URL with its password masked, safe for logs.
    public var description: String {
        let credentials = password == nil ? "" : "\(username ?? ""):***@"
        return "redis://\(credentials)\(host):\(port)/\(database)"
    }
}
