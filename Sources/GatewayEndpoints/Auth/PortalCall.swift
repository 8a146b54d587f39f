import GatewayEdge
import GatewayPrimitives
import HTTPTypes

/// How a portal API call came (docs/portal.md, "Sessions"): from the portal's own pages, and
/// with which session cookie. Checked before anything else, so a refused call changes nothing.
///
/// Every call must carry `Origin: <portal.origin>` and must not be a `cross-site` fetch (the
/// rule of the refresh cookie's calls, ``WebCall``). One exception, forced by the Fetch
/// standard: browsers send no `Origin` with a same-origin `GET` or `HEAD`, so those pass on
/// `Sec-Fetch-Site: same-origin` instead, which no page can forge and which only a browser
/// sends. A call with neither is refused.
struct PortalCall {
    /// The session cookie's value, when the call carries one.
    let session: String?

    init(_ headers: HTTPFields, method: HTTPRequest.Method, portalOrigin: String) throws {
        guard !WebCall.isCrossSite(headers) else { throw Self.forbidden }
        if let origin = headers[.origin] {
            guard origin == portalOrigin else { throw Self.forbidden }
        } else {
            let sameOrigin = headers[.secFetchSite].map { HeaderName.equals($0, "same-origin") } ?? false
            guard sameOrigin, method == .get || method == .head else { throw Self.forbidden }
        }
        let cookies = CookieField.values(named: PortalCookie.name, in: headers[values: .cookie])
        guard cookies.count <= 1 else { throw Self.cookieTwice }
        session = cookies.first
    }

    static let forbidden = GatewayError(.forbidden, "FORBIDDEN", "portal calls come from the portal's own pages (Origin)")
    static let cookieTwice = GatewayError.invalidRequest("the session cookie came twice: clear this site's cookies and sign in again")
    static let signedOut = GatewayError(.unauthorized, "UNAUTHORIZED", "no session, or it ended: sign in")
}
