/// One HS256 secret and the `kid` that names it in token headers.
///
/// The secret is validated here, once, so that a short or empty secret stops the gateway
/// at start-up instead of producing forgeable tokens (jwt-kit only `assert`s the length,
/// which release builds drop).
public struct AccessTokenSigningKey: Sendable, CustomStringConvertible {
    /// HS256's output size. A shorter HMAC key is easier to brute-force than the MAC itself
    /// (RFC 7518 §3.2 requires at least this much).
    public static let minimumSecretLength = 32
    /// Bound on `kid` length; it is copied into every token and every log line about one.
    public static let maximumKeyIDLength = 64

    /// The `kid` header value of tokens signed with this key.
    public let kid: String
    /// Not public: once handed in, the secret should only ever reach jwt-kit.
    let secret: [UInt8]

    /// - Parameters:
    ///   - kid: 1...64 printable ASCII characters without spaces.
    ///   - secret: at least ``minimumSecretLength`` bytes of high-entropy random data.
    public init(kid: String, secret: [UInt8]) throws(DriverTokensError) {
        guard !kid.isEmpty, kid.utf8.count <= Self.maximumKeyIDLength,
            kid.utf8.allSatisfy({ (0x21...0x7e).contains($0) })
        else {
            throw DriverTokensError("kid must be 1...\(Self.maximumKeyIDLength) printable ASCII characters")
        }
        guard secret.count >= Self.minimumSecretLength else {
            throw DriverTokensError(
                "secret of kid \(kid) has \(secret.count) bytes; at least \(Self.minimumSecretLength) are required")
        }
        self.kid = kid
        self.secret = secret
    }

    /// Names the key only: the secret must never reach a log.
    public var description: String { "AccessTokenSigningKey(kid: \(kid))" }

    /// Checks the list the signer and verifier share: non-empty and without a repeated kid
    /// (a repeated kid would silently shadow one secret with another in jwt-kit).
    static func validate(_ keys: [AccessTokenSigningKey]) throws(DriverTokensError) {
        guard !keys.isEmpty else { throw DriverTokensError("at least one signing key is required") }
        var seen = Set<String>()
        for key in keys where !seen.insert(key.kid).inserted {
            throw DriverTokensError("kid \(key.kid) is configured twice")
        }
    }
}

extension AccessTokenSigningKey: CustomReflectable {
    /// Keeps `dump` and debuggers from showing the secret.
    public var customMirror: Mirror { Mirror(self, children: ["kid": kid]) }
}
