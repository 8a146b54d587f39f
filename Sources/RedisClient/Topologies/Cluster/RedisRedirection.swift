/// What a cluster node's error reply says about where a command belongs.
///
/// - `MOVED <slot> <host:port>`: the slot lives elsewhere now; the slot map is out of date.
/// - `ASK <slot> <host:port>`: the slot is being migrated and this key is already on the
///   target; send it there once, preceded by `ASKING`, and keep the map as it is.
/// - `TRYAGAIN` (a multi-key command during a migration) and `CLUSTERDOWN` (the cluster
///   lost a slot's primary, e.g. during a failover): nothing ran; try again shortly.
enum RedisRedirection: Sendable, Hashable {
    case moved(slot: Int, to: RedisNodeAddress)
    case ask(slot: Int, to: RedisNodeAddress)
    case tryAgain

    /// The redirection an error reply carries, or nil for any other reply. `answeredBy` is
    /// the node that answered: a redirection with an empty host (`:7001`) means its host.
    init?(_ reply: RedisValue, answeredBy node: RedisNodeAddress?) {
        guard case .error(let message) = reply else { return nil }
        self.init(message: message, answeredBy: node)
    }

    init?(message: String, answeredBy node: RedisNodeAddress?) {
        if message.hasPrefix("TRYAGAIN") || message.hasPrefix("CLUSTERDOWN") {
            self = .tryAgain
            return
        }
        let fields = message.split(separator: " ")
        guard fields.count == 3, fields[0] == "MOVED" || fields[0] == "ASK", let slot = Int(fields[1]),
              (0..<RedisHashSlot.count).contains(slot), var address = RedisNodeAddress(fields[2])
        else { return nil }
        if address.host.isEmpty {
            guard let node else { return nil }
            address.host = node.host
        }
        self = fields[0] == "MOVED" ? .moved(slot: slot, to: address) : .ask(slot: slot, to: address)
    }
}
