/// Which primary serves each of the 16384 slots, as a cluster node last described it.
///
/// Read from `CLUSTER SHARDS` (Redis 7), or `CLUSTER SLOTS` on older servers; a `MOVED`
/// reply corrects one slot until the next full read.
struct RedisClusterSlotMap: Sendable, Equatable {
    /// Every primary that serves at least one slot, in the order first seen.
    private(set) var primaries: [RedisNodeAddress] = []
    /// Per slot, 1 + the index of its primary in `primaries`; 0 when no primary serves it.
    private var owners = [UInt16](repeating: 0, count: RedisHashSlot.count)

    init() {}

    func primary(forSlot slot: Int) -> RedisNodeAddress? {
        let owner = owners[slot]
        return owner == 0 ? nil : primaries[Int(owner) - 1]
    }

    /// How many slots no primary serves: any is a cluster that cannot answer every key.
    var uncoveredSlots: Int { owners.lazy.filter { $0 == 0 }.count }

    /// Records that `slots` are served by `node`.
    mutating func assign(_ slots: ClosedRange<Int>, to node: RedisNodeAddress) {
        let index: Int
        if let known = primaries.firstIndex(of: node) {
            index = known
        } else {
            primaries.append(node)
            index = primaries.count - 1
        }
        for slot in slots where (0..<RedisHashSlot.count).contains(slot) {
            owners[slot] = UInt16(index + 1)
        }
    }

    /// The map after `MOVED slot node`: only that slot changes; primaries left with no slot
    /// stay listed until the next full read replaces the map.
    func moving(_ slot: Int, to node: RedisNodeAddress) -> RedisClusterSlotMap {
        var copy = self
        copy.assign(slot...slot, to: node)
        return copy
    }

    /// Parses a `CLUSTER SHARDS` reply: per shard, `slots` (start, end pairs) and `nodes`
    /// (each a field list with `endpoint`/`ip`, `port`/`tls-port`, `role`). `asked` stands in
    /// for a node announced without an address.
    init(shards reply: RedisValue, asked: RedisNodeAddress, usesTLS: Bool) throws(RedisError) {
        guard let shards = reply.array else { throw .protocolViolation("CLUSTER SHARDS is not an array") }
        for shard in shards {
            let fields = Self.fields(shard)
            guard let ranges = fields["slots"]?.array?.compactMap(\.int), let nodes = fields["nodes"]?.array else {
                throw .protocolViolation("CLUSTER SHARDS entry without slots or nodes")
            }
            let primary = nodes.map(Self.fields).first { $0["role"]?.string == "master" }
            guard let primary, !ranges.isEmpty else { continue }
            let port = (usesTLS ? primary["tls-port"]?.int : nil) ?? primary["port"]?.int ?? primary["tls-port"]?.int
            guard let port else { throw .protocolViolation("CLUSTER SHARDS node without a port") }
            let node = RedisNodeAddress(host: Self.host(primary["endpoint"]?.string, primary["ip"]?.string, asked: asked), port: Int(port))
            for pair in stride(from: 0, to: ranges.count - 1, by: 2) {
                assign(Int(ranges[pair])...Int(ranges[pair + 1]), to: node)
            }
        }
    }

    /// Parses a `CLUSTER SLOTS` reply: `[start, end, [host, port, id], replicas...]` per range.
    init(slots reply: RedisValue, asked: RedisNodeAddress) throws(RedisError) {
        guard let ranges = reply.array else { throw .protocolViolation("CLUSTER SLOTS is not an array") }
        for range in ranges {
            guard let parts = range.array, parts.count >= 3, let start = parts[0].int, let end = parts[1].int,
                  let primary = parts[2].array, primary.count >= 2, let port = primary[1].int
            else { throw .protocolViolation("CLUSTER SLOTS entry is not [start, end, [host, port, ...]]") }
            assign(Int(start)...Int(end), to: RedisNodeAddress(host: Self.host(primary[0].string, nil, asked: asked), port: Int(port)))
        }
    }

    /// A node's announced address: its endpoint, else its IP; empty or `?` (unknown) means
    /// the node that answered.
    private static func host(_ endpoint: String?, _ ip: String?, asked: RedisNodeAddress) -> String {
        for candidate in [endpoint, ip] {
            if let candidate, !candidate.isEmpty, candidate != "?" { return candidate }
        }
        return asked.host
    }

    /// A RESP2 field list (`name, value, name, value...`) as a dictionary.
    private static func fields(_ value: RedisValue) -> [String: RedisValue] {
        guard let items = value.array else { return [:] }
        var fields: [String: RedisValue] = [:]
        for pair in stride(from: 0, to: items.count - 1, by: 2) {
            if let name = items[pair].string { fields[name] = items[pair + 1] }
        }
        return fields
    }
}
