/// What a connection sends for itself: `AUTH` and `SELECT` on opening, `ASKING` before a
/// command a migrating cluster slot sent elsewhere.
extension RedisCommand {
    /// `AUTH [username] password`; an ACL user without a password is named with "".
    static func auth(username: String?, password: String) -> RedisCommand {
        RedisCommand("AUTH", arguments: (username.map { [$0] } ?? []) + [password])
    }

    static func select(_ database: Int) -> RedisCommand {
        RedisCommand("SELECT", arguments: [String(database)])
    }

    static let asking = RedisCommand("ASKING")
}
