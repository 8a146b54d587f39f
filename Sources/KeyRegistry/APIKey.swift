import Crypto
import GatewayPrimitives

/// A partner API key: `pgk_live_<43 base62 characters>_<6-character checksum>`.
///
/// - The fixed `pgk_live_` prefix makes leaked keys greppable by secret scanners.
/// - 43 characters drawn uniformly from 62 carry 256 bits from the system CSPRNG.
/// - The checksum is CRC-32 of everything before it, in 6 base62 characters, so a mistyped key
///   is refused before any Redis lookup.
///
/// The key itself is shown once and never stored: Redis keeps its SHA-256 (``hash``). With
/// 256 random bits behind it the hash cannot be brute-forced, so a pepper would add nothing.
public struct APIKey: Sendable, Hashable {
    public static let prefix = "pgk_live_"
    static let secretLength = 43
    static let checksumLength = 6
    static let length = prefix.utf8.count + secretLength + 1 + checksumLength
    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    /// The full key text; never log it.
    public let text: String

    /// Parses a presented key, checking its shape and checksum; nil for anything else.
    ///
    /// Runs on every partner request, so it reads the string's own UTF-8 storage in place
    /// instead of copying it into arrays.
    public init?(_ text: String) {
        var text = text
        let valid = text.withUTF8 { bytes -> Bool in
            guard bytes.count == Self.length, bytes.starts(with: Self.prefix.utf8) else { return false }
            let secretStart = Self.prefix.utf8.count
            let separator = secretStart + Self.secretLength
            guard bytes[separator] == UInt8(ascii: "_") else { return false }
            guard bytes[secretStart..<separator].allSatisfy(Self.isBase62) else { return false }
            return bytes[(separator + 1)...].elementsEqual(Self.checksum(of: bytes[..<separator]))
        }
        guard valid else { return nil }
        self.text = text
    }

    /// A key given as a substring or other string type.
    public init?(_ text: some StringProtocol) {
        self.init(String(text))
    }

    /// A new key from the system CSPRNG.
    public static func generate() -> APIKey {
        var generator = SystemRandomNumberGenerator()
        var bytes = Array(prefix.utf8)
        for _ in 0..<secretLength {
            bytes.append(alphabet[Int.random(in: 0..<alphabet.count, using: &generator)])
        }
        let checksum = checksum(of: bytes[...])
        bytes.append(UInt8(ascii: "_"))
        bytes.append(contentsOf: checksum)
        return APIKey(unchecked: String(decoding: bytes, as: UTF8.self))
    }

    private init(unchecked text: String) {
        self.text = text
    }

    /// SHA-256 of the key, lowercase hex: the only form Redis ever sees.
    public var hash: String {
        APIKey.hash(of: text)
    }

    static func hash(of text: String) -> String {
        var text = text
        return text.withUTF8 { Hex.encode(SHA256.hash(data: $0), count: SHA256.byteCount) }
    }

    /// The key's non-secret beginning (`pgk_live_7Qx4`): the fixed prefix and the first
    /// ``startSecretCharacters`` of the secret, stored with the key so people can tell keys
    /// apart. Four base62 characters leave 252 of the 256 random bits unknown.
    public var start: String {
        String(text.prefix(Self.prefix.count + Self.startSecretCharacters))
    }

    static let startSecretCharacters = 4

    /// ``start`` marked as cut short (`pgk_live_7Qx4…`), for logs and descriptions.
    public var displayPrefix: String {
        start + "…"
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

extension APIKey: CustomStringConvertible {
    /// Never the key: only its recognisable beginning.
    public var description: String { displayPrefix }
}
