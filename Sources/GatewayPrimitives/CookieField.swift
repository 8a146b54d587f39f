/// Reading cookies out of `Cookie` request fields (RFC 6265: `name=value` pairs separated by
/// `;`), for the gateway's own cookies (the refresh cookie, the portal's session).
package enum CookieField {
    /// Every value of the cookie `name` in `fields`, in order: none, one, or more (a planted one
    /// beside the real one: the caller must not choose between them).
    package static func values(named name: String, in fields: some Sequence<String>) -> [String] {
        var values: [String] = []
        for field in fields {
            for pair in field.split(separator: ";") {
                let pair = pair.drop(while: { $0 == " " })
                guard let equals = pair.firstIndex(of: "=") else { continue }
                if pair[..<equals] == name { values.append(String(pair[pair.index(after: equals)...].prefix(while: { $0 != " " }))) }
            }
        }
        return values
    }
}
