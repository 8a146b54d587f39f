import GatewayEdge
import HTTPTypes
import Hummingbird

/// Serves the portal's pages at `/portal/` (``PortalSite``), each with the headers that keep
/// them to themselves: a Content-Security-Policy allowing only the gateway's own scripts,
/// styles and API (no inline script, no other origin), no framing, no MIME sniffing, no
/// referrer.
struct PortalSiteController {
    let site: PortalSite

    static let securityHeaders: HTTPFields = [
        .contentSecurityPolicy: "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        .xFrameOptions: "DENY",
        .xContentTypeOptions: "nosniff",
        .referrerPolicy: "no-referrer",
        .crossOriginOpenerPolicy: "same-origin",
        .cacheControl: "no-cache",
    ]

    func addRoutes(to router: Router<GatewayRequestContext>) {
        // One route for both (the router does not tell them apart): the pages' relative
        // links need the trailing slash.
        router.get("/portal") { request, _ in
            guard request.uri.path.hasSuffix("/") else { return Response(status: .permanentRedirect, headers: [.location: "/portal/"]) }
            return try file("index.html")
        }
        router.get("/portal/:file") { _, context in try file(context.parameters.get("file") ?? "") }
    }

    private func file(_ name: String) throws -> Response {
        guard let file = site.files[name] else { throw GatewayError.notFound }
        var headers = Self.securityHeaders
        headers[.contentType] = file.contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: file.body))
    }
}

extension HTTPField.Name {
    static let xFrameOptions = Self("X-Frame-Options")!
    static let xContentTypeOptions = Self("X-Content-Type-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
    static let crossOriginOpenerPolicy = Self("Cross-Origin-Opener-Policy")!
}
