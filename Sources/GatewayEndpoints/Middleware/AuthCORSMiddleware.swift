import GatewayAdmission
import HTTPTypes
import Hummingbird
import NIOHTTP1

/// CORS on the gateway's `/auth/*` endpoints, by the same ``CORSPolicy`` as proxied routes:
/// a preflight is answered `204` here (it has no route of its own), and every response to
/// an allowed origin, errors included, carries the policy's fields.
struct AuthCORSMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let policy: CORSPolicy

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard policy.isEnabled, request.uri.path.hasPrefix("/auth/") else { return try await next(request, context) }
        let origin = request.headers[.origin]
        if request.method == .options, origin != nil, request.headers[.accessControlRequestMethod] != nil {
            return Response(status: .noContent, headers: Self.fields(policy.preflightFields(origin: origin)))
        }
        // Inside the observability middlewares, outside ErrorMiddleware: errors are
        // responses by now, and get the fields too, so a page can read why it was refused.
        var response = try await next(request, context)
        for field in policy.responseFields(origin: origin) {
            response.headers.append(HTTPField(name: HTTPField.Name(field.name)!, value: field.value))
        }
        return response
    }

    private static func fields(_ fields: [(name: String, value: String)]) -> HTTPFields {
        HTTPFields(fields.map { HTTPField(name: HTTPField.Name($0.name)!, value: $0.value) })
    }
}
