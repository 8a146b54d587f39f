/// The portal's session cookie (docs/portal.md, "Sessions"): its name and the `Set-Cookie`
/// values that set and clear it.
///
/// Script-proof (`HttpOnly`), HTTPS only (`Secure`; browsers count `http://localhost` as
/// secure), never sent by another site's pages (`SameSite=Strict`), host-only (no `Domain`),
/// and sent only to the portal's paths (`Path=/portal`): proxied routes never see it. Two of
/// the name in one request are refused: one was planted.
enum PortalCookie {
    static let name = "pg_portal"

    /// The `Set-Cookie` that hands a browser its session, for `maxAge` seconds (the session's
    /// absolute lifetime; its idle end is the gateway's to enforce).
    static func setting(_ token: String, maxAge: Int) -> String {
        "\(name)=\(token); Max-Age=\(maxAge); Path=/portal; HttpOnly; Secure; SameSite=Strict"
    }

    /// The `Set-Cookie` that makes a browser forget the session.
    static let clearing = "\(name)=; Max-Age=0; Path=/portal; HttpOnly; Secure; SameSite=Strict"
}
