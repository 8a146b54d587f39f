import GatewayPrimitives

/// The refresh-token cookie of web sessions (docs/public-api.md, "Web apps"): its name, the
/// `Set-Cookie` values that set and clear it, reading it from `Cookie` fields, and taking it
/// out of a `Cookie` field that goes to an upstream.
///
/// Not `__Host-`: that prefix demands `Path=/`, and the cookie is limited to `/auth` so that
/// no other request to the gateway's host carries it.
package enum RefreshCookie {
    package static let name = "pg_refresh"
    package static let path = "/auth"

    /// The `Set-Cookie` that hands a browser `token`, for `maxAge` seconds: script-proof
    /// (`HttpOnly`), HTTPS only (`Secure`; browsers count `http://localhost` as secure),
    /// never sent by another site's pages (`SameSite=Strict`), host-only (no `Domain`).
    package static func setting(_ token: String, maxAge: Int) -> String {
        "\(name)=\(token); Max-Age=\(maxAge); Path=\(path); HttpOnly; Secure; SameSite=Strict"
    }

    /// The `Set-Cookie` that makes a browser forget the cookie.
    package static let clearing = "\(name)=; Max-Age=0; Path=\(path); HttpOnly; Secure; SameSite=Strict"

    /// The cookie's value in `Cookie` field values, or nil without one. Several cookies of
    /// that name (one set for another path, say) are not a credential to pick from: the
    /// first is taken, as RFC 6265 orders the longest path first.
    package static func value(in cookieFields: some Sequence<String>) -> String? {
        for field in cookieFields {
            for pair in field.split(separator: ";") {
                let pair = pair.drop(while: { $0 == " " })
                guard let equals = pair.firstIndex(of: "=") else { continue }
                if pair[..<equals] == name { return String(pair[pair.index(after: equals)...].prefix(while: { $0 != " " })) }
            }
        }
        return nil
    }

    /// `field` (a `Cookie` value) without this cookie; nil when nothing else is left. Most
    /// fields never held it and are returned as they came.
    package static func removed(from field: String) -> String? {
        guard field.contains(name) else { return field }
        let kept = field.split(separator: ";").map { $0.drop(while: { $0 == " " }) }.filter { pair in
            guard let equals = pair.firstIndex(of: "=") else { return true }
            return pair[..<equals] != name
        }
        return kept.isEmpty ? nil : kept.joined(separator: "; ")
    }
}
