/// The Redis value of an `Idempotency-Key` record, one string: `F<fingerprint><owner>` while
/// the first request is forwarded (the lock), `D<fingerprint><sealed response>` once its
/// answer is stored. A string rather than a hash so that taking the lock is one native atomic
/// command (`SET … NX GET`) instead of a script: the lock is half of Redis's work per keyed
/// request.
package enum IdempotencyRecord {
    /// The fingerprint's length: a hex SHA-256.
    static let fingerprintLength = 64

    /// The lock's value: the fingerprint, and the owner token that release checks and the
    /// store's reply is compared with.
    package static func lock(fingerprint: String, owner: String) -> String {
        String(unsafeUninitializedCapacity: 1 + fingerprint.utf8.count + owner.utf8.count) { buffer in
            buffer[0] = UInt8(ascii: "F")
            let index = buffer[1...].initialize(fromContentsOf: fingerprint.utf8)
            return buffer[index...].initialize(fromContentsOf: owner.utf8)
        }
    }

    /// The stored answer's value.
    package static func stored(fingerprint: String, sealed: some Collection<UInt8>) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 1 + fingerprint.utf8.count + sealed.count) { buffer, count in
            buffer[0] = UInt8(ascii: "D")
            let index = buffer[1...].initialize(fromContentsOf: fingerprint.utf8)
            count = buffer[index...].initialize(fromContentsOf: sealed)
        }
    }

    /// What a request with `fingerprint` finds in a record Redis held (`SET … NX GET`'s reply:
    /// nil when the record was absent and the lock is now this request's).
    package static func found(_ value: [UInt8]?, fingerprint: String) -> IdempotencyLock? {
        guard let value else { return .acquired }
        guard value.count > fingerprintLength, let kind = value.first else { return nil }
        guard value[1...fingerprintLength].elementsEqual(fingerprint.utf8) else { return .mismatch }
        switch kind {
        case UInt8(ascii: "F"): return .inFlight
        case UInt8(ascii: "D"): return .stored(sealed: Array(value[(fingerprintLength + 1)...]))
        default: return nil
        }
    }
}
