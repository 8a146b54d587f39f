import GatewayPrimitives
import Synchronization

/// The token in a lock that proves which request holds it: this process's random prefix and
/// a counter, so it is unique across instances and restarts without a `getrandom` call per
/// request. It needs to be unique, not secret: only gateways write these records.
enum IdempotencyOwner {
    private static let prefix = RandomHex.string(byteCount: 8)
    private static let counter = Atomic<UInt64>(0)

    static func next() -> String {
        let (count, _) = counter.add(1, ordering: .relaxed)
        return prefix + String(count, radix: 16)
    }
}
