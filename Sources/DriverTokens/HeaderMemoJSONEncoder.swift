import Foundation
import JWTKit
import Synchronization

/// jwt-kit's JSON encoder for the access tokens, remembering the header's encoding: every
/// token one signer makes has the same header (`alg`, `kid`, `typ`), and encoding it again
/// with Foundation's `JSONEncoder` was about a third of what a signature cost. The claims are
/// encoded each time, as jwt-kit's default encoder would (dates as seconds since 1970).
final class HeaderMemoJSONEncoder: JWTJSONEncoder {
    private let encoder: JSONEncoder
    /// The last header encoded, and its JSON.
    private let memo = Mutex<(header: [String: JWTHeaderField], json: Data)?>(nil)

    init() {
        encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
    }

    func encode<T: Encodable>(_ value: T) throws -> Data {
        guard let header = value as? JWTHeader else { return try encoder.encode(value) }
        if let memo = memo.withLock({ $0 }), memo.header == header.fields { return memo.json }
        let json = try encoder.encode(header)
        memo.withLock { $0 = (header.fields, json) }
        return json
    }
}
