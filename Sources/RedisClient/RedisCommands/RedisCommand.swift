import NIOCore

/// A command and its arguments, each an exact byte string (binary safe), with what the pool
/// routes it by: the keys it touches and whether it only reads.
///
/// Built by the typed constructors beside this file, one file per command family, so each
/// command's shape, keys and read-only flag are written once; on a cluster the first key
/// picks the slot, so no caller and no router guesses which argument is a key.
///
/// Encoded as RESP once, when it is built (``RESPWriter``): one buffer per
/// command rather than one array per argument, written to the socket as it is.
public struct RedisCommand: Sendable, Hashable {
    /// The command as Redis reads it: a RESP array of bulk strings.
    let encoded: ByteBuffer
    /// Every key the command touches, in order: Redis refuses keys of several cluster slots,
    /// so the first one names the slot of them all.
    public let keys: [String]
    /// Writes nothing: a replica could answer it.
    public let isReadOnly: Bool
    /// The command's name in capitals, for logs and metrics (never its arguments, which may
    /// be secrets).
    public let name: String

    /// `name`, then its `keys`, then its other `arguments`: the shape of nearly every keyed
    /// command. Public for commands the gateway itself never sends (tests, tools).
    public init(_ name: String, keys: [String] = [], arguments: [String] = [], isReadOnly: Bool = false) {
        let encoded = RESPWriter.encode { resp in
            resp.array(1 + keys.count + arguments.count)
            resp.bulk(name)
            for key in keys { resp.bulk(key) }
            for argument in arguments { resp.bulk(argument) }
        }
        self.init(encoded: encoded, keys: keys, isReadOnly: isReadOnly, name: Self.capitalised(name))
    }

    /// Arguments as exact bytes (a binary value), keys declared apart.
    public init(bytes arguments: [[UInt8]], keys: [String] = [], isReadOnly: Bool = false) {
        let encoded = RESPWriter.encode { resp in
            resp.array(arguments.count)
            for argument in arguments { resp.bulk(argument) }
        }
        let name = arguments.first.map { String(decoding: $0, as: UTF8.self) } ?? ""
        self.init(encoded: encoded, keys: keys, isReadOnly: isReadOnly, name: Self.capitalised(name))
    }

    init(encoded: ByteBuffer, keys: [String], isReadOnly: Bool, name: String) {
        self.encoded = encoded
        self.keys = keys
        self.isReadOnly = isReadOnly
        self.name = name
    }

    /// The arguments as sent, read back from the encoded command (tests, the blocking
    /// connection); the name is the first.
    public var arguments: [[UInt8]] {
        RESPArguments.decode(encoded) ?? []
    }

    /// The typed constructors already spell names in capitals: no new string then.
    private static func capitalised(_ name: String) -> String {
        name.utf8.contains(where: { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || $0 >= 0x80 }) ? name.uppercased() : name
    }
}
