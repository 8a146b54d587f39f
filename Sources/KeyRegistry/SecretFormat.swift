import Crypto
import GatewayPrimitives

/// The one shape of every secret the gateway issues: `<prefix><43 base62 characters>_<6-character
/// checksum>` (partner API keys, admin credentials).
///
/// - A fixed prefix per kind makes leaked secrets greppable by secret scanners.
/// - 43 characters drawn uniformly from 62 carry 256 bits from the system CSPRNG.
/// - The checksum is CRC-32 of everything before it, in 6 base62 characters, so a mistyped
///   secret is refused before any Redis lookup.
///
/// Secrets are shown once and never stored: Redis keeps their SHA-256 (``hash(of:)``). With 256
/// random bits behind it the hash cannot be brute-forced, so a pepper would add nothing.
struct SecretFormat: Sendable {
    static let secretLength = 43
    static let checksumLength = 6
    /// How many secret characters a stored `start` keeps: 252 of the 256 bits stay unknown.
    static let startSecretCharacters = 4
    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    let prefix: String
    let length: Int

    init(prefix: String) {
        self.prefix = prefix
        self.length = prefix.utf8.count + Self.secretLength + 1 + Self.checksumLength
    }

    /// Whether `bytes` have this format's shape and a correct checksum.
    func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count == length, bytes.starts(with: prefix.utf8) else { return false }
        let secretStart = prefix.utf8.count
        let separator = secretStart + Self.secretLength
        guard bytes[separator] == UInt8(ascii: "_") else { return false }
        guard bytes[secretStart..<separator].allSatisfy(Self.isBase62) else { return false }
        return bytes[(separator + 1)...].elementsEqual(Self.checksum(of: bytes[..<separator]))
    }

    /// Whether `text` has this format's shape and a correct checksum.
    func isValid(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isValid($0) }
    }

    /// A new secret from the system CSPRNG.
    func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = Array(prefix.utf8)
        for _ in 0..<Self.secretLength {
            bytes.append(Self.alphabet[Int.random(in: 0..<Self.alphabet.count, using: &generator)])
        }
        let checksum = Self.checksum(of: bytes[...])
        bytes.append(UInt8(ascii: "_"))
        bytes.append(contentsOf: checksum)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The secret's non-secret beginning: the prefix and the first ``startSecretCharacters``.
    func start(of text: String) -> String {
        String(text.prefix(prefix.count + Self.startSecretCharacters))
    }

    /// SHA-256 of the secret, lowercase hex: the only form Redis ever sees.
    static func hash(of text: String) -> String {
        var text = text
        return text.withUTF8 { Hex.encode(SHA256.hash(data: $0), count: SHA256.byteCount) }
    }

    private static func checksum(of bytes: some Collection<UInt8>) -> [UInt8] {
        var value = CRC32.checksum(bytes)
        var digits = [UInt8](repeating: alphabet[0], count: checksumLength)
        for index in stride(from: checksumLength - 1, through: 0, by: -1) {
            digits[index] = alphabet[Int(value % 62)]
            value /= 62
        }
        return digits
    }

    private static func isBase62(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"): true
        default: false
        }
    }
}
