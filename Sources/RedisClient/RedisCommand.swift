/// A command and its arguments, each an exact byte string (binary safe).
public struct RedisCommand: Sendable, Hashable {
    public var arguments: [[UInt8]]

    public init(_ name: String, _ arguments: [String]) {
        self.arguments = [Array(name.utf8)] + arguments.map { Array($0.utf8) }
    }

    public init(_ name: String, _ arguments: String...) {
        self.init(name, arguments)
    }

    public init(bytes arguments: [[UInt8]]) {
        self.arguments = arguments
    }

    /// The command's name, for logs and metrics (never its arguments, which may be secrets).
    public var name: String {
        arguments.first.map { String(decoding: $0, as: UTF8.self).uppercased() } ?? ""
    }
}
