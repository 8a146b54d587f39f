/// A command and its arguments, each an exact byte string (binary safe), with what the pool
/// routes it by: the keys it touches and whether it only reads.
///
/// Built by the typed constructors beside this file, one file per command family, so each
/// command's shape, keys and read-only flag are written once; on a cluster the first key
/// picks the slot, so no caller and no router guesses which argument is a key.
public struct RedisCommand: Sendable, Hashable {
    public let arguments: [[UInt8]]
    /// Every key the command touches, in order: Redis refuses keys of several cluster slots,
    /// so the first one names the slot of them all.
    public let keys: [String]
    /// Writes nothing: a replica could answer it.
    public let isReadOnly: Bool

    /// `name`, then its `keys`, then its other `arguments`: the shape of nearly every keyed
    /// command. Public for commands the gateway itself never sends (tests, tools).
    public init(_ name: String, keys: [String] = [], arguments: [String] = [], isReadOnly: Bool = false) {
        var encoded: [[UInt8]] = [Array(name.utf8)]
        encoded.reserveCapacity(1 + keys.count + arguments.count)
        for key in keys { encoded.append(Array(key.utf8)) }
        for argument in arguments { encoded.append(Array(argument.utf8)) }
        self.init(encoded: encoded, keys: keys, isReadOnly: isReadOnly)
    }

    /// Arguments as exact bytes (a binary value), keys declared apart.
    public init(bytes arguments: [[UInt8]], keys: [String] = [], isReadOnly: Bool = false) {
        self.init(encoded: arguments, keys: keys, isReadOnly: isReadOnly)
    }

    private init(encoded: [[UInt8]], keys: [String], isReadOnly: Bool) {
        self.arguments = encoded
        self.keys = keys
        self.isReadOnly = isReadOnly
    }

    /// The command's name, for logs and metrics (never its arguments, which may be secrets).
    public var name: String {
        guard let first = arguments.first else { return "" }
        let name = String(decoding: first, as: UTF8.self)
        // The typed constructors already spell it in capitals: no new string per call then.
        return first.contains(where: { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || $0 >= 0x80 }) ? name.uppercased() : name
    }
}
