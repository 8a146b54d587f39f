import GatewayAdmission
import GatewayEdge
import GatewayPrimitives
import HTTPTypes

/// How an auth call came (docs/public-api.md, "Web apps"): from a page of an allowed origin
/// (a web call: the refresh token lives in the ``RefreshCookie``, never in a body), and with
/// which refresh cookie.
///
/// A call that would use the cookie is checked against cross-site request forgery before
/// anything else happens: its `Origin` must be allowed and `Sec-Fetch-Site`, when a browser
/// sends it, must not be `cross-site` (in any case). `SameSite=Strict` already keeps other
/// sites' pages from sending the cookie; this holds where that does not (old browsers,
/// sibling subdomains). Two cookies of the name are refused: one was planted.
struct WebCall {
    /// The `Origin` is in `web.allowed_origins`.
    let isWeb: Bool
    /// The refresh cookie's value, when the call carries one and web sessions are on.
    let cookie: String?
    /// The call carries the cookie twice: one of them planted (a longer path, another host).
    private let cookieTwice: Bool
    private let crossSite: Bool
    private let fromBrowser: Bool

    init(_ headers: HTTPFields, cors: CORSPolicy) {
        let origin = headers[.origin]
        isWeb = cors.allows(origin)
        let cookies = cors.isEnabled ? RefreshCookie.values(in: headers[values: .cookie]) : []
        cookie = cookies.first
        cookieTwice = cookies.count > 1
        crossSite = Self.isCrossSite(headers)
        fromBrowser = origin != nil || headers[.secFetchSite] != nil
    }

    static let forbidden = GatewayError(.forbidden, "FORBIDDEN", "this origin may not use the refresh cookie")
    static let twoCredentials = GatewayError.invalidRequest("send the refresh token in the cookie or in the body, not both")
    static let noCookie = GatewayError(.unauthorized, "INVALID_TOKEN", "no refresh cookie: log in again")
    static let cookieTwice = GatewayError.invalidRequest("the refresh cookie came twice: clear this site's cookies and log in again")

    /// The refresh token to use: the body's, or the cookie's once the call passed the CSRF
    /// check. A browser call without a body token would use the cookie, so it is checked
    /// even when no cookie came; a native call without either is missing its token.
    func refreshToken(body: String?) throws -> String {
        if cookieTwice { throw Self.cookieTwice }
        if let body {
            guard cookie == nil else { throw Self.twoCredentials }
            return body
        }
        guard cookie != nil || fromBrowser else { throw GatewayError.invalidRequest("missing field \"refresh_token\"") }
        try checkCookieUse()
        guard let cookie else { throw Self.noCookie }
        return cookie
    }

    /// The refresh token a logout also ends: the body's, or the cookie's (CSRF-checked).
    func logoutToken(body: String?) throws -> String? {
        if cookieTwice { throw Self.cookieTwice }
        if let body {
            guard cookie == nil else { throw Self.twoCredentials }
            return body
        }
        guard cookie != nil else { return nil }
        try checkCookieUse()
        return cookie
    }

    private func checkCookieUse() throws {
        guard isWeb, !crossSite else { throw Self.forbidden }
    }

    /// Whether a browser says the call comes from another site's page (`Sec-Fetch-Site:
    /// cross-site`): never a call a cookie may authenticate, whatever its `Origin` (the portal's
    /// session cookie follows the same rule, ``PortalCall``).
    static func isCrossSite(_ headers: HTTPFields) -> Bool {
        // In any case: a value an intermediary recased (`Cross-Site`) must not slip past.
        headers[.secFetchSite].map { HeaderName.equals($0, "cross-site") } ?? false
    }
}

extension HTTPField.Name {
    static let secFetchSite = Self("Sec-Fetch-Site")!
}
