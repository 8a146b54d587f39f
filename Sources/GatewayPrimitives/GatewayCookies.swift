/// The cookies the gateway sets itself: a web app's refresh cookie (today's name and the one
/// before it) and the portal's session. An upstream's `Set-Cookie` of one of them would plant
/// or shadow it in the browser (a session fixation into the portal), so none reaches a client.
package enum GatewayCookies {
    /// Lowercase: names are compared in any case, as some browsers match the `__Host-` prefix.
    package static let names: [StaticString] = ["__host-pg_refresh", "pg_refresh", "pg_portal"]

    /// Whether a `Set-Cookie` value (the bytes of an upstream's head) sets one of ``names``,
    /// with spaces or tabs around the name.
    package static func isSet(by setCookie: UnsafeRawBufferPointer) -> Bool {
        guard let equals = setCookie.firstIndex(of: UInt8(ascii: "=")) else { return false }
        var start = 0
        var end = equals
        while start < end, setCookie[start] == UInt8(ascii: " ") || setCookie[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, setCookie[end - 1] == UInt8(ascii: " ") || setCookie[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        let cookieName = UnsafeRawBufferPointer(rebasing: setCookie[start..<end])
        return names.contains { HeaderName.equals(cookieName, $0) }
    }
}
