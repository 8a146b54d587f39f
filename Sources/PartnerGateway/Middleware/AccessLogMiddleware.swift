import Foundation
import Hummingbird
import Logging

/// One log line per request: method, route, status, duration and request id.
///
/// The route is the matched route, not the path: paths and query strings can carry phone
/// numbers or tokens, and nothing secret may reach a log (docs/security-model.md).
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let response = try await next(request, context)
        let milliseconds = (ContinuousClock.now - started).inSeconds * 1000
        logger.info("request", metadata: [
            "method": .string(request.method.rawValue),
            "route": .string(context.endpointPath ?? "unmatched"),
            "status": .stringConvertible(response.status.code),
            "duration_ms": .string(String(format: "%.2f", milliseconds)),
            "request_id": .string(context.requestID),
        ])
        return response
    }
}
