/// Why an access token was refused.
///
/// Every case means the same thing to a client (`401 INVALID_TOKEN`): telling an attacker
/// which check failed would only help them probe. The cases exist so the server can log
/// and count refusals (an expired token is routine; a bad signature or `alg` is not).
public enum AccessTokenError: String, Error, Sendable, CaseIterable, CustomStringConvertible {
    /// Not a compact JWS: wrong number of parts, bad base64url, bad JSON, bad claim types.
    case malformed = "malformed"
    /// Longer than ``AccessTokenVerifier/maximumTokenLength``; refused before any parsing.
    case tooLong = "too_long"
    /// The header's `alg` is anything but `HS256` (including `none`), or `crit`/`typ` is unexpected.
    case unsupportedAlgorithm = "unsupported_algorithm"
    /// The header has no `kid`.
    case missingKeyID = "missing_kid"
    /// The header's `kid` names no configured key.
    case unknownKeyID = "unknown_kid"
    /// The HMAC does not match: another secret, or an altered header or payload.
    case badSignature = "bad_signature"
    /// `exp` is in the past by more than the leeway.
    case expired = "expired"
    /// `nbf` or `iat` is in the future by more than the leeway.
    case notYetValid = "not_yet_valid"
    /// `iss` is not this gateway's issuer.
    case wrongIssuer = "wrong_issuer"

    /// The code every refusal maps to in the HTTP error body.
    public static let httpErrorCode = "INVALID_TOKEN"

    /// A stable, machine-readable reason, suitable as a log field or metric label.
    public var code: String { rawValue }

    /// True for the one routine refusal, so it can be logged at a lower level.
    public var isExpired: Bool { self == .expired }

    public var description: String { "AccessTokenError(\(rawValue))" }
}
