import GatewayEdge
import GatewayPrimitives
import NIOHTTP1

/// The request an edge asks about on `/forward` (docs/edges.md): its method and its canonical
/// target, told by the first of these conventions the forward request follows:
///
/// 1. Envoy's `ext_authz` HTTP service: the original path appended after `/forward` (the
///    filter's `path_prefix`), the original method as the forward request's own;
/// 2. Traefik's `forwardAuth`: `X-Forwarded-Uri` and `X-Forwarded-Method` on `/forward`;
/// 3. nginx's `auth_request`, as docs/edges.md configures it: `X-Original-URI` and
///    `X-Original-Method` on `/forward`.
///
/// The target is made canonical as a client's is at the public edge (``RequestPath``), so a
/// route matches the path an upstream will resolve, and refused (`400`) where a client's would
/// be. Routes match paths only: the original host is not consulted.
package struct ForwardedRequest: Sendable {
    /// Which edge's convention told the request.
    package enum Convention: String, Sendable {
        case envoy, traefik, nginx
    }

    package let method: HTTPMethod
    /// Origin-form and canonical: the path, then the query as sent.
    package let target: String
    package let convention: Convention

    /// The path of ``target``, without the query.
    package var path: Substring { RequestPath.path(ofTarget: target) }

    /// Where forward requests are asked: `/forward`, and below it in Envoy's convention.
    package static let prefix = "/forward"

    static let forwardedURI = "x-forwarded-uri"
    static let forwardedMethod = "x-forwarded-method"
    static let originalURI = "x-original-uri"
    static let originalMethod = "x-original-method"

    /// The request `head` (a forward request, past the request edge's rules) asks about, or
    /// the `400 INVALID_REQUEST` that says why it names none.
    package static func of(_ head: HTTPRequestHead) -> Result<ForwardedRequest, GatewayError> {
        let uri = head.uri
        let rest = uri.dropFirst(prefix.utf8.count)
        let headers = head.headers
        if rest.utf8.first == UInt8(ascii: "/") {
            // An edge sending to `/forward/` and a field as well (Traefik's address written with a
            // slash) would have every request judged as `/`: refused, not guessed.
            if rest == "/", headers.contains(name: forwardedURI) || headers.contains(name: originalURI) {
                return .failure(.invalidRequest("a forward request names its request by the path after /forward or by a field, not both"))
            }
            // The edge rules made the original path canonical on its own (an anchored prefix).
            return method(head.method.rawValue).map { ForwardedRequest(method: $0, target: String(rest), convention: .envoy) }
        }
        for (convention, uriField, methodField) in [
            (Convention.traefik, forwardedURI, forwardedMethod), (Convention.nginx, originalURI, originalMethod),
        ] {
            let targets = headers[uriField]
            guard !targets.isEmpty else { continue }
            let methods = headers[methodField]
            guard targets.count == 1, methods.count <= 1 else {
                return .failure(.invalidRequest("more than one \(uriField) or \(methodField) field"))
            }
            let target: String
            switch RequestPath.normalize(target: targets[0]) {
            case .unchanged: target = targets[0]
            case .rewritten(let rewritten, _): target = rewritten
            case .refused(let refusal): return .failure(.invalidRequest("\(uriField): \(refusal.description)"))
            }
            guard target.utf8.first == UInt8(ascii: "/") else {
                return .failure(.invalidRequest("\(uriField): the request target is not a path"))
            }
            // An edge that leaves the method out asks about a GET, as Traefik's own tests do.
            return method(methods.first ?? "GET").map { ForwardedRequest(method: $0, target: target, convention: convention) }
        }
        return .failure(.invalidRequest(
            "a forward request names the request it asks about: the path after /forward, X-Forwarded-Uri or X-Original-URI"
        ))
    }

    /// `text` as a method: one the public listener's parser takes, so an edge cannot add a
    /// method label to the metrics per name it passes on.
    private static func method(_ text: String) -> Result<HTTPMethod, GatewayError> {
        guard (1...32).contains(text.utf8.count), text.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
            return .failure(.invalidRequest("the original method is not an upper-case method name"))
        }
        let method = HTTPMethod(rawValue: text)
        if case .RAW = method { return .failure(.invalidRequest("the original method is not one the gateway serves")) }
        return .success(method)
    }
}
