import Foundation
import JWTKit
import Synchronization

/// jwt-kit's JSON encoder for the access tokens. Foundation's `JSONEncoder` was most of what a
/// signature cost, so neither part of a token goes through it on the hot path: the header,
/// the same for every token one signer makes (`alg`, `kid`, `typ`), is encoded once and
/// remembered, and the claims are written by ``AccessTokenClaims/json``. jwt-kit still builds,
/// base64url-encodes and signs the token; anything else is encoded as jwt-kit's default
/// encoder would (dates as seconds since 1970).
final class AccessTokenJSONEncoder: JWTJSONEncoder {
    private let encoder: JSONEncoder
    /// The last header encoded, and its JSON.
    private let memo = Mutex<(header: [String: JWTHeaderField], json: Data)?>(nil)

    init() {
        encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
    }

    func encode<T: Encodable>(_ value: T) throws -> Data {
        if let claims = value as? AccessTokenClaims { return Data(claims.json) }
        guard let header = value as? JWTHeader else { return try encoder.encode(value) }
        if let memo = memo.withLock({ $0 }), memo.header == header.fields { return memo.json }
        let json = try encoder.encode(header)
        memo.withLock { $0 = (header.fields, json) }
        return json
    }
}
