import GatewayEdge
import GatewayPrimitives
import NIOHTTP1

/// The `Idempotency-Key` of a request (draft-ietf-httpapi-idempotency-key-header): a
/// structured-field string, `"…"`, though a bare token is taken too, as most clients send one.
package enum IdempotencyKeyHeader {
    package enum Reading: Equatable {
        /// The method takes no key, or none was sent on a route that does not require one.
        case notKeyed
        case keyed(String)
        case refused(GatewayError)
    }

    package static let missing = GatewayError.invalidRequest("this route requires an Idempotency-Key header on POST and PATCH")
    package static let malformed = GatewayError.invalidRequest("Idempotency-Key must be one value of 1 to 255 visible ASCII characters")

    /// Only `POST` and `PATCH` are keyed: the other methods are idempotent already.
    package static func read(method: HTTPMethod, head: ClientRequestHead, required: Bool) -> Reading {
        guard method == .POST || method == .PATCH else { return .notKeyed }
        // One pass, no array of the values: the first, and whether there is a second.
        var value: String?
        var repeated = false
        head.forEachField { field in
            guard HeaderName.equals(field.name, "idempotency-key") else { return }
            if value != nil { repeated = true } else { value = field.valueString }
        }
        if repeated { return .refused(malformed) }
        guard let value else { return required ? .refused(missing) : .notKeyed }
        var key = Substring(value)
        // Bytes, not characters: a key is ASCII, and counting characters walks the whole value.
        let quote = UInt8(ascii: "\"")
        if key.utf8.count >= 2, key.utf8.first == quote, key.utf8.last == quote { key = key.dropFirst().dropLast() }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != quote }) else {
            return .refused(malformed)
        }
        return .keyed(String(key))
    }
}
