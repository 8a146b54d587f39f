/// One RESP2 reply, converted from hiredis's `redisReply` tree on the connection's event loop.
///
/// Error replies are values here (not thrown) so a pipeline can return every reply, including
/// the failed ones, in order; the single-command API turns them into ``RedisError/server(_:)``.
public enum RedisValue: Sendable, Hashable {
    case simpleString(String)
    case bulkString([UInt8])
    case integer(Int64)
    case array([RedisValue])
    case null
    case error(String)

    /// The reply as text: simple and bulk strings, and integers in decimal.
    public var string: String? {
        switch self {
        case .simpleString(let text): text
        case .bulkString(let bytes): String(decoding: bytes, as: UTF8.self)
        case .integer(let value): String(value)
        default: nil
        }
    }

    /// The reply as an integer: integer replies and strings holding a decimal number.
    public var int: Int64? {
        switch self {
        case .integer(let value): value
        case .bulkString, .simpleString: string.flatMap { Int64($0) }
        default: nil
        }
    }

    public var array: [RedisValue]? {
        if case .array(let values) = self { return values }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The reply, or the error it carries thrown as ``RedisError/server(_:)``.
    public func throwingServerError() throws(RedisError) -> RedisValue {
        if case .error(let message) = self { throw .server(message) }
        return self
    }
}
