/// A partner API key: `pgk_live_<43 base62 characters>_<6-character checksum>`, in the
/// gateway's one secret format (``SecretFormat``: prefix, 256 random bits, CRC-32 checksum).
///
/// The key itself is shown once and never stored: Redis keeps its SHA-256 (``hash``).
public struct APIKey: Sendable, Hashable {
    public static let prefix = "pgk_live_"
    static let format = SecretFormat(prefix: prefix)
    static let secretLength = SecretFormat.secretLength
    static let checksumLength = SecretFormat.checksumLength
    static let length = format.length

    /// The full key text; never log it.
    public let text: String

    /// Parses a presented key, checking its shape and checksum; nil for anything else.
    ///
    /// Runs on every partner request, so it reads the string's own UTF-8 storage in place
    /// instead of copying it into arrays.
    public init?(_ text: String) {
        var text = text
        guard text.withUTF8({ Self.format.isValid($0) }) else { return nil }
        self.text = text
    }

    /// A key given as a substring or other string type.
    public init?(_ text: some StringProtocol) {
        self.init(String(text))
    }

    /// A new key from the system CSPRNG.
    public static func generate() -> APIKey {
        APIKey(unchecked: format.generate())
    }

    private init(unchecked text: String) {
        self.text = text
    }

    /// SHA-256 of the key, lowercase hex: the only form Redis ever sees.
    public var hash: String {
        SecretFormat.hash(of: text)
    }

    /// The key's non-secret beginning (`pgk_live_7Qx4`): the fixed prefix and the first
    /// ``startSecretCharacters`` of the secret, stored with the key so people can tell keys
    /// apart. Four base62 characters leave 252 of the 256 random bits unknown.
    public var start: String {
        Self.format.start(of: text)
    }

    static let startSecretCharacters = SecretFormat.startSecretCharacters

    /// ``start`` marked as cut short (`pgk_live_7Qx4…`), for logs and descriptions.
    public var displayPrefix: String {
        start + "…"
    }
}

extension APIKey: CustomStringConvertible {
    /// Never the key: only its recognisable beginning.
    public var description: String { displayPrefix }
}
