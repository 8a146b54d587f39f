import Crypto
import GatewayPrimitives

/// The server key a refresh token's successor is derived with:
/// `successor = family id + HMAC-SHA256(key, presented token)` (truncated to the token's
/// 192 random bits).
///
/// Deriving instead of drawing at random is what makes a lost refresh answer recoverable
/// without keeping any token in plaintext: a retry of the same token recomputes the same
/// successor, and Redis only has to confirm that its hash is the session's current token
/// (see docs/DECISIONS.md, "Refresh retries"). The key never reaches Redis, so a Redis
/// dump (token hashes only) still yields no usable token.
public struct RefreshSuccessorKey: Sendable {
    /// HMAC state with the key already absorbed; each derivation copies it.
    private let keyed: HMAC<SHA256>

    /// Derives the key with HKDF-SHA256 from `secret` (the phone key, which must never
    /// change either), under its own label so the two uses cannot collide.
    public init(derivingFrom secret: [UInt8]) {
        let derived = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret),
            info: Array("partner-gateway refresh-token successor v1".utf8),
            outputByteCount: 32
        )
        self.keyed = HMAC<SHA256>(key: derived)
    }

    /// The random part (48 hex characters) of the successor of `token`.
    func successorSuffix(of token: String) -> String {
        var hmac = keyed
        var token = token
        token.withUTF8 { hmac.update(data: $0) }
        let bytes = (RefreshToken.length - RefreshToken.familyIDLength) / 2
        return Hex.encode(hmac.finalize().prefix(bytes))
    }
}
