/// What taking the lock found in a key's record (``IdempotencyStore/lock(_:fingerprint:lockValue:lifetime:on:found:)``).
package enum IdempotencyLock: Equatable, Sendable {
    /// The key was free: this request owns it and is forwarded.
    case acquired
    /// A request with the same key is still being forwarded.
    case inFlight
    /// The key was used for a different request (method, target or body).
    case mismatch
    /// The response stored for the key, still encrypted.
    case stored(sealed: [UInt8])
}
