import GatewayPrimitives

/// The refresh-token cookie of web sessions (docs/public-api.md, "Web apps"): its name, the
/// `Set-Cookie` values that set and clear it, reading it from `Cookie` fields, taking it out
/// of a `Cookie` field that goes to an upstream (an upstream's `Set-Cookie` of it:
/// ``GatewayCookies``).
///
/// `__Host-`: browsers then take it only from a secure origin of this very host, for `Path=/`
/// and without `Domain`, so no sibling subdomain or plain-`http://` page can plant one of
/// the name (docs/DECISIONS.md, "The refresh cookie is `__Host-pg_refresh`").
package enum RefreshCookie {
    package static let name = "__Host-pg_refresh"
    /// The name before the prefix: never read, but no upstream may set it either.
    package static let formerName = "pg_refresh"

    /// The `Set-Cookie` that hands a browser `token`, for `maxAge` seconds: script-proof
    /// (`HttpOnly`), HTTPS only (`Secure`; browsers count `http://localhost` as secure),
    /// never sent by another site's pages (`SameSite=Strict`), host-only (no `Domain`).
    package static func setting(_ token: String, maxAge: Int) -> String {
        "\(name)=\(token); Max-Age=\(maxAge); Path=/; HttpOnly; Secure; SameSite=Strict"
    }

    /// The `Set-Cookie` that makes a browser forget the cookie.
    package static let clearing = "\(name)=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Strict"

    /// Every value of the cookie in `Cookie` field values, in order: none, one, or more (a
    /// planted one beside the real one), which the caller must not choose from.
    package static func values(in cookieFields: some Sequence<String>) -> [String] {
        CookieField.values(named: name, in: cookieFields)
    }

    /// `field` (a `Cookie` value) without this cookie; nil when nothing else is left. Most
    /// fields never held it and are returned as they came.
    package static func removed(from field: String) -> String? {
        guard field.contains(formerName) else { return field }
        let kept = field.split(separator: ";").map { $0.drop(while: { $0 == " " }) }.filter { pair in
            guard let equals = pair.firstIndex(of: "=") else { return true }
            let cookieName = pair[..<equals]
            return cookieName != name && cookieName != formerName
        }
        return kept.isEmpty ? nil : kept.joined(separator: "; ")
    }
}
