import Foundation
import JWTKit

/// Checks presented access tokens; every refusal is an ``AccessTokenError``.
///
/// Every configured key verifies (the first one is the one that signs), so a secret can be
/// rotated without logging anyone out. The header is checked here, before jwt-kit sees
/// the token, because jwt-kit 5.8.0 by itself would accept too much: it falls back to its
/// default key when the `kid` is unknown or missing, and it ignores the header's `alg`
/// for HMAC keys (it verifies with the key's own algorithm whatever the header claims).
/// The rules of docs/security-model.md must not hinge on those defaults.
public final class AccessTokenVerifier: Sendable {
    /// The only accepted `alg`.
    public static let algorithm = "HS256"
    /// The most clock skew ever tolerated past `exp`, and before `iat` and `nbf` (docs/public-api.md),
    /// in seconds.
    public static let maximumLeeway: TimeInterval = 5
    /// Longer input is refused unread: our tokens are ~400 bytes, so anything near this is
    /// an attack on the parser, not a token.
    public static let maximumTokenLength = 4096

    /// The `iss` a token must carry.
    public let issuer: String
    /// Seconds past `exp`, and before `iat` and `nbf`, a token is still accepted,
    /// `0...maximumLeeway`.
    public let leeway: TimeInterval
    /// Tokens already verified, so repeats skip HMAC and JSON. See ``VerifiedTokenCache``.
    public let cache: VerifiedTokenCache

    private let keys: JWTKeyCollection
    private let keyIDs: Set<String>
    private let parser = DefaultJWTParser()

    /// - Parameters:
    ///   - keys: every key whose tokens are still valid, signing key first.
    ///   - issuer: the `iss` a token must carry.
    ///   - leeway: clock skew allowed past `exp`; clamped to `0...5` seconds.
    ///   - cacheCapacity: how many verified tokens to remember.
    public init(
        keys: [AccessTokenSigningKey],
        issuer: String,
        leeway: TimeInterval = AccessTokenVerifier.maximumLeeway,
        cacheCapacity: Int = 100_000
    ) async throws(DriverTokensError) {
        try AccessTokenSigningKey.validate(keys)
        guard !issuer.isEmpty else { throw DriverTokensError("issuer must not be empty") }
        let collection = JWTKeyCollection()
        for key in keys {
            await collection.add(
                hmac: HMACKey(from: key.secret), digestAlgorithm: .sha256, kid: JWKIdentifier(string: key.kid))
        }
        // Belt and braces with the kid check below: with no default key, jwt-kit itself
        // refuses a kid it does not hold instead of trying the first key added.
        await collection.clearDefault()
        self.keys = collection
        self.keyIDs = Set(keys.map(\.kid))
        self.issuer = issuer
        self.leeway = Self.clampedLeeway(leeway)
        self.cache = VerifiedTokenCache(capacity: cacheCapacity, leeway: self.leeway)
    }

    /// The claims of `token` if it was verified before and is still unexpired; no async hop.
    ///
    /// A nil means "not known yet", not "invalid": call ``verify(_:now:)`` next.
    public func cachedClaims(for token: String, now: Date = Date()) -> AccessTokenClaims? {
        guard token.utf8.count <= Self.maximumTokenLength else { return nil }
        return cache.claims(for: token, now: now)
    }

    /// Whether claims this verifier returned earlier are still unexpired at `now` (with the
    /// same leeway), for callers that keep them a while instead of asking the cache again.
    public func isUnexpired(_ claims: AccessTokenClaims, now: Date = Date()) -> Bool {
        claims.isUnexpired(at: now, leeway: leeway)
    }

    /// Fully verifies `token` (or answers from the cache) and returns its claims.
    ///
    /// Revocation is not checked here: the server checks the session (`sid`) and the user's
    /// revocation time afterwards.
    public func verify(_ token: String, now: Date = Date()) async throws(AccessTokenError) -> AccessTokenClaims {
        guard token.utf8.count <= Self.maximumTokenLength else { throw .tooLong }
        if let claims = cache.claims(for: token, now: now) { return claims }

        try checkHeader(of: token)
        let claims: AccessTokenClaims
        do {
            claims = try await keys.verify(token, as: AccessTokenClaims.self)
        } catch {
            throw Self.refusal(for: error)
        }
        guard claims.issuer == issuer else { throw .wrongIssuer }
        guard claims.isUnexpired(at: now, leeway: leeway) else { throw .expired }
        guard claims.hasStarted(at: now, leeway: leeway) else { throw .notYetValid }
        cache.insert(claims, for: token, now: now)
        return claims
    }

    /// Refuses anything but `alg: HS256` with a configured `kid`, before any key is used.
    private func checkHeader(of token: String) throws(AccessTokenError) {
        // The three segments may only hold base64url characters. Besides refusing junk
        // cheaply, this rules out padding and whitespace variants of one token, which would
        // otherwise be distinct cache keys for the same signature.
        var periods = 0
        for byte in token.utf8 {
            if byte == UInt8(ascii: ".") {
                periods += 1
            } else if !Self.isBase64URL(byte) {
                throw .malformed
            }
        }
        guard periods == 2 else { throw .malformed }

        let header: JWTHeader
        do {
            header = try parser.parse(Array(token.utf8), as: OpaquePayload.self).header
        } catch {
            throw .malformed
        }
        guard header.alg == Self.algorithm else { throw .unsupportedAlgorithm }
        // `crit` names extensions we would have to understand (RFC 7515 §4.1.11); we
        // understand none. A `typ` other than JWT marks some other kind of token.
        guard header.fields["crit"] == nil, header.typ == nil || header.typ == "JWT" else {
            throw .unsupportedAlgorithm
        }
        guard let kid = header.kid else {
            throw header.fields["kid"] == nil ? .missingKeyID : .malformed
        }
        guard keyIDs.contains(kid) else { throw .unknownKeyID }
    }

    private static func refusal(for error: any Error) -> AccessTokenError {
        if let refusal = error as? AccessTokenError { return refusal }
        guard let error = error as? JWTError else { return .malformed }
        switch error.errorType {
        case .signatureVerificationFailed: return .badSignature
        case .unknownKID, .noKeyProvided: return .unknownKeyID
        case .missingKIDHeader: return .missingKeyID
        default: return .malformed
        }
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }

    static func clampedLeeway(_ leeway: TimeInterval) -> TimeInterval {
        guard leeway.isFinite else { return maximumLeeway }
        return min(max(leeway, 0), maximumLeeway)
    }
}

/// A payload that accepts any JSON object: lets jwt-kit's parser hand over the header
/// without the claims being decoded (and possibly refused) before the signature is checked.
private struct OpaquePayload: JWTPayload {
    init(from decoder: any Decoder) throws {
        _ = try decoder.container(keyedBy: AnyKey.self)
    }

    func encode(to encoder: any Encoder) throws {}

    func verify(using algorithm: some JWTAlgorithm) async throws {}

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
