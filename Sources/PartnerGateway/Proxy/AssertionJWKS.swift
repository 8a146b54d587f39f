import Hummingbird

/// The body of `GET /.well-known/jwks.json`: the public half of every assertion key, so an
/// upstream can verify `X-Gateway-Assertion` with any JWT library (RFC 7517, RFC 7518 §6.2).
struct AssertionJWKS: ResponseEncodable, Sendable {
    struct Key: Codable, Sendable, Equatable {
        var kty = "EC"
        var crv = "P-256"
        /// The base64url coordinates of the public point.
        let x: String
        let y: String
        let kid: String
        var alg = "ES256"
        var use = "sig"
    }

    let keys: [Key]
}
