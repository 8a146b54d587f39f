import Crypto
import Foundation
import GatewayPrimitives

/// The keys of `Idempotency-Key` records, both derived by HKDF from the phone key
/// (`users.phone_key_env`), so the feature needs no secret of its own: one names a record
/// (an HMAC of route, caller and key, so the client's key never reaches Redis in clear), the
/// other seals the stored response with AES-GCM, bound to the record's name as associated
/// data (a sealed response copied to another record does not open).
package struct IdempotencySecrets: Sendable {
    package static let keyPrefix = "pg:idem:"
    /// The HMAC keyed for naming records, copied per name: keying it (two SHA-256 blocks)
    /// is done once, not per request.
    private let naming: HMAC<SHA256>
    private let sealing: SymmetricKey
    private let nonces = SealingNonces()

    package init(derivingFrom secret: [UInt8]) {
        let material = SymmetricKey(data: secret)
        naming = HMAC<SHA256>(key: HKDF<SHA256>.deriveKey(inputKeyMaterial: material, info: Array("idempotency-name-v1".utf8), outputByteCount: 32))
        sealing = HKDF<SHA256>.deriveKey(inputKeyMaterial: material, info: Array("idempotency-v1".utf8), outputByteCount: 32)
    }

    /// `pg:idem:{<hex HMAC of route, caller and key>}`: one hash tag per record.
    package func recordKey(route: String, caller: String, key: String) -> String {
        var hmac = naming
        LengthPrefixed.withMessage([route, caller, key]) { hmac.update(data: $0) }
        let mac = hmac.finalize()
        let prefix = Self.keyPrefix.utf8
        return String(unsafeUninitializedCapacity: prefix.count + 2 + 2 * SHA256.byteCount) { buffer in
            var index = buffer.initialize(fromContentsOf: prefix)
            buffer[index] = UInt8(ascii: "{")
            index = Hex.write(mac, count: SHA256.byteCount, into: buffer, at: index + 1)
            buffer[index] = UInt8(ascii: "}")
            return index + 1
        }
    }

    /// `plaintext` sealed for `recordKey`: nonce, ciphertext and tag, as bytes (Redis values
    /// are binary safe, so no base64 to grow the record by a third).
    package func seal(_ plaintext: [UInt8], recordKey: String) throws -> Data {
        var recordKey = recordKey
        let box = try recordKey.withUTF8 { name in
            try AES.GCM.seal(plaintext, using: sealing, nonce: nonces.next(), authenticating: UnsafeRawBufferPointer(name))
        }
        guard let combined = box.combined else { throw CryptoKitError.incorrectParameterSize }
        return combined
    }

    /// The plaintext of a sealed response of `recordKey`; nil when it does not open.
    package func open(_ sealed: some DataProtocol, recordKey: String) -> [UInt8]? {
        guard let box = try? AES.GCM.SealedBox(combined: sealed),
            let plaintext = try? AES.GCM.open(box, using: sealing, authenticating: Array(recordKey.utf8))
        else { return nil }
        return Array(plaintext)
    }
}
