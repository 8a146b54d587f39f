import GatewayEdge
import HTTPTypes
import Hummingbird
import Logging

/// Gives every request an `X-Request-Id`, echoes it on every response and puts it on the
/// request's logger (`context.logger`), so every line logged about the request carries it.
///
/// A client's id is kept only when it is sane (``RequestID/isSane(_:)``).
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let requestID = request.headers[.xRequestID].flatMap { RequestID.isSane($0) ? $0 : nil } ?? RequestID.generate()
        context.requestID = requestID
        context.logger[metadataKey: "request_id"] = .string(requestID)
        var response = try await next(request, context)
        response.headers[.xRequestID] = requestID
        return response
    }
}
