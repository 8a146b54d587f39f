import DriverTokens
import Crypto
import GatewayPrimitives

/// Turns phone numbers, portal members' emails and one-time codes into keyed digests
/// (HMAC-SHA256), the only form in which they reach Redis.
///
/// A plain SHA-256 would not do: there are only about 4 billion Indian mobile numbers and a
/// million 6-digit codes, so an unkeyed hash of either is reversed by enumeration in
/// seconds. With the key (`users.phone_key_env`) kept out of Redis, a Redis dump reveals
/// neither. The key must never change: the phone → user index is addressed by these
/// digests, so a new key would make every driver a new user.
public struct PhoneHasher: Sendable {
    /// HMAC-SHA256 keys shorter than the hash output are weaker than the MAC itself.
    public static let minimumKeyLength = 32

    /// HMAC state with the key already absorbed: each digest copies it and hashes only the
    /// message (keying HMAC costs two extra SHA-256 blocks per call otherwise).
    private let keyed: HMAC<SHA256>

    public init(key: [UInt8]) throws(DriverSessionsError) {
        guard key.count >= Self.minimumKeyLength else {
            throw DriverSessionsError("the phone key needs at least \(Self.minimumKeyLength) bytes")
        }
        self.keyed = HMAC<SHA256>(key: SymmetricKey(data: key))
    }

    /// The phone's identity in Redis keys (`pg:phone:{tag}`, `pg:otp:{tag}`) and rate-limit
    /// buckets: 32 hex characters (128 bits), short enough for key names, far too many to
    /// collide.
    public func tag(for phone: PhoneNumber) -> String {
        return Hex.encode(mac("phone:" + phone.digits).prefix(16))
    }

    /// A portal member's email (lowercase) as the subject of sign-in codes (`pg:otp:{tag}`) and
    /// of their rate-limit buckets: a tag of its own kind, never equal to a phone's.
    public func tag(forEmail email: String) -> String {
        return Hex.encode(mac("email:" + email).prefix(16))
    }

    /// What Redis stores for an OTP: bound to the phone, so one phone's stored digest says
    /// nothing about another's code.
    public func otpDigest(code: String, phoneTag: String) -> String {
        return Hex.encode(mac("otp:" + phoneTag + ":" + code))
    }

    private func mac(_ message: String) -> HashedAuthenticationCode<SHA256> {
        var hmac = keyed
        var message = message
        message.withUTF8 { hmac.update(data: $0) }
        return hmac.finalize()
    }
}
