import HTTPTypes

/// The token of an `Authorization: Bearer <token>` header (scheme case-insensitive).
enum BearerToken {
    static func from(_ headers: HTTPFields) -> Substring? {
        guard let value = headers[.authorization] else { return nil }
        let scheme = "bearer "
        guard value.count > scheme.count, value.prefix(scheme.count).lowercased() == scheme else { return nil }
        let token = value.dropFirst(scheme.count).drop(while: { $0 == " " })
        return token.isEmpty ? nil : token
    }
}
