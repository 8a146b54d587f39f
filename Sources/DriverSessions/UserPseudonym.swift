import Crypto
import GatewayPrimitives

/// How the audit trail names a driver it only looked up (`users.find`, `sessions.list`): a
/// keyed hash of the user id (HMAC-SHA256 under a key derived from the phone key,
/// `users.phone_key_env`), so the trail, a hash chain that cannot be edited, keeps no lookup
/// naming an erased driver, while one driver's lookups still read alike.
public struct UserPseudonym: Sendable {
    /// HMAC state with the key absorbed once.
    private let keyed: HMAC<SHA256>

    public init(derivingFrom secret: [UInt8]) {
        let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: secret), info: Array("audit-user-v1".utf8), outputByteCount: 32)
        keyed = HMAC<SHA256>(key: key)
    }

    /// `usrh_` and 24 hex characters (96 bits), as long as a user id.
    public func name(of userID: String) -> String {
        var hmac = keyed
        hmac.update(data: Array(userID.utf8))
        return "usrh_" + Hex.encode(hmac.finalize().prefix(12))
    }
}
