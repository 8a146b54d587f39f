import DriverTokens
import Foundation
import JWTKit
import Testing

/// Keys, clocks and token surgery shared by the DriverTokens tests.
enum Fixtures {
    static let issuer = "partner-gateway-test"
    static let secret1 = Array("k1-secret-for-tests-0123456789-abcdefghij-0123456789-abcdefghijklmn".utf8)
    static let secret2 = Array("k2-secret-for-tests-9876543210-zyxwvutsrq-9876543210-zyxwvutsrqpon".utf8)
    static let familyID = "0123456789abcdef"
    static let ttl: TimeInterval = 3600

    static var k1: AccessTokenSigningKey { try! AccessTokenSigningKey(kid: "k1", secret: secret1) }
    static var k2: AccessTokenSigningKey { try! AccessTokenSigningKey(kid: "k2", secret: secret2) }

    /// Now, in whole seconds, so expiry arithmetic in tests is exact.
    static func now() -> Date {
        Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
    }

    static func signer(
        _ keys: [AccessTokenSigningKey] = [k1], issuer: String = issuer
    ) async throws -> AccessTokenSigner {
        try await AccessTokenSigner(keys: keys, issuer: issuer, timeToLive: ttl)
    }

    static func verifier(
        _ keys: [AccessTokenSigningKey] = [k1], leeway: TimeInterval = 5, cacheCapacity: Int = 1000
    ) async throws -> AccessTokenVerifier {
        try await AccessTokenVerifier(keys: keys, issuer: issuer, leeway: leeway, cacheCapacity: cacheCapacity)
    }

    /// Claims as the gateway would issue them, for tokens crafted with jwt-kit directly.
    static func claims(now: Date = now(), issuer: String = issuer) -> AccessTokenClaims {
        AccessTokenClaims(
            userID: "usr_test", sessionID: familyID, channel: .otp, tokenID: "jti-test", issuer: issuer,
            issuedAt: now, expiresAt: now.addingTimeInterval(ttl))
    }

    /// A jwt-kit key collection holding `secret` under `kid` (nil: as the default key).
    static func collection(
        secret: [UInt8] = secret1, kid: String? = "k1", digest: DigestAlgorithm = .sha256
    ) async -> JWTKeyCollection {
        await JWTKeyCollection().add(
            hmac: HMACKey(from: secret), digestAlgorithm: digest, kid: kid.map { JWKIdentifier(string: $0) })
    }

    static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func base64URLDecode(_ text: some StringProtocol) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    /// The JSON object in segment `index` (0 header, 1 payload) of `token`.
    static func json(of token: String, segment index: Int) throws -> [String: Any] {
        let segment = token.split(separator: ".", omittingEmptySubsequences: false)[index]
        let data = try #require(base64URLDecode(segment))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// `token` with segment `index` replaced by the base64url of `json`.
    static func replacing(segment index: Int, of token: String, with json: String) -> String {
        var parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        parts[index] = base64URL(Array(json.utf8))
        return parts.joined(separator: ".")
    }
}
