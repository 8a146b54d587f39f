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
        hmac.update(data: LengthPrefixed.message([route, caller, key]))
        return "\(Self.keyPrefix){\(Hex.encode(hmac.finalize()))}"
    }

    /// `plaintext` sealed for `recordKey`: nonce, ciphertext and tag, as bytes (Redis values
    /// are binary safe, so no base64 to grow the record by a third).
    package func seal(_ plaintext: [UInt8], recordKey: String) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: sealing, nonce: nonces.next(), authenticating: Array(recordKey.utf8))
        guard let combined = box.combined else { throw CryptoKitError.incorrectParameterSize }
        return Array(combined)
    }

    /// The plaintext of a sealed response of `recordKey`; nil when it does not open.
    package func open(_ sealed: [UInt8], recordKey: String) -> [UInt8]? {
        guard let box = try? AES.GCM.SealedBox(combined: sealed),
            let plaintext = try? AES.GCM.open(box, using: sealing, authenticating: Array(recordKey.utf8))
        else { return nil }
        return Array(plaintext)
    }
}
