import Crypto
import Synchronization

/// The AES-GCM nonces of one process's sealing (``IdempotencySecrets``): a random 96-bit
/// start drawn once, then counted up, as NIST SP 800-38D's deterministic construction does.
/// A nonce never repeats within the process, and costs no `getrandom` per seal; two processes
/// sharing the key repeat one only if their random starts land within each other's count,
/// far less likely than random nonces drawn per seal (which NIST caps at 2^32 seals a key).
final class SealingNonces: Sendable {
    /// The start's fixed high 32 bits.
    private let high: UInt32
    /// The start's low 64 bits, to which the count is added (wrapping).
    private let low: UInt64
    private let count = Atomic<UInt64>(0)

    init() {
        var generator = SystemRandomNumberGenerator()
        high = generator.next()
        low = generator.next()
    }

    func next() -> AES.GCM.Nonce {
        let counted = low &+ count.add(1, ordering: .relaxed).oldValue
        var bytes = (high.bigEndian, UInt32(truncatingIfNeeded: counted >> 32).bigEndian, UInt32(truncatingIfNeeded: counted).bigEndian)
        // Twelve bytes are a valid GCM nonce: this cannot throw.
        return withUnsafeBytes(of: &bytes) { try! AES.GCM.Nonce(data: $0) }
    }
}
