/// The body of `GET /.well-known/jwks.json`: the public half of every assertion key, so an
/// upstream can verify `X-Gateway-Assertion` with any JWT library (RFC 7517, RFC 7518 §6.2).
package struct AssertionJWKS: Encodable, Sendable {
    package struct Key: Codable, Sendable, Equatable {
        package var kty = "EC"
        package var crv = "P-256"
        /// The base64url coordinates of the public point.
        package let x: String
        package let y: String
        package let kid: String
        package var alg = "ES256"
        package var use = "sig"
    }

    package let keys: [Key]
}
