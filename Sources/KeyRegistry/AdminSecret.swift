/// A personal admin credential's secret: `pga_live_<43 base62 characters>_<6-character
/// checksum>`, in the same format as partner keys (``SecretFormat``) with its own prefix, so
/// a scanner tells a leaked admin credential from a partner key at a glance.
///
/// Shown once, when created or rotated; Redis keeps only its SHA-256 (``hash``).
public struct AdminSecret: Sendable, Hashable {
    public static let prefix = "pga_live_"
    static let format = SecretFormat(prefix: prefix)

    /// The full secret; never log it.
    public let text: String

    /// Parses a presented credential, checking its shape and checksum; nil for anything else
    /// (the break-glass `GATEWAY_ADMIN_TOKEN`, for one).
    public init?(_ text: String) {
        guard Self.format.isValid(text) else { return nil }
        self.text = text
    }

    private init(unchecked text: String) {
        self.text = text
    }

    /// A new secret from the system CSPRNG.
    public static func generate() -> AdminSecret {
        AdminSecret(unchecked: format.generate())
    }

    /// SHA-256 of the secret, lowercase hex: the only form Redis ever sees.
    public var hash: String { SecretFormat.hash(of: text) }

    /// The non-secret beginning (`pga_live_Q7x4`), kept so people can tell credentials apart.
    public var start: String { Self.format.start(of: text) }
}

extension AdminSecret: CustomStringConvertible {
    /// Never the secret: only its recognisable beginning.
    public var description: String { start + "…" }
}
