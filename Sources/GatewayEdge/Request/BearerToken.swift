import GatewayPrimitives
import HTTPTypes

/// The token of an `Authorization: Bearer <token>` header (scheme case-insensitive).
package enum BearerToken {
    package static func from(_ headers: HTTPFields) -> Substring? {
        from(authorization: headers[.authorization])
    }

    /// From the header's value, for code that reads headers below Hummingbird.
    package static func from(authorization value: String?) -> Substring? {
        guard let value else { return nil }
        let scheme = "bearer "
        guard value.utf8.count > scheme.utf8.count, HeaderName.hasPrefix(value, scheme) else { return nil }
        let token = value.dropFirst(scheme.count).drop(while: { $0 == " " })
        return token.isEmpty ? nil : token
    }
}
