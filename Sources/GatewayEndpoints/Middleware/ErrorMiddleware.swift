import GatewayEdge
import HTTPTypes
import Hummingbird
import Logging
import RedisClient

/// Turns every error that reaches it into a response in the gateway's JSON error shape.
///
/// Framework errors (router 404, 405, body too large) keep their status but get the gateway's
/// codes; anything unexpected is logged by type and answered with a bare 500 that reveals
/// nothing about the internals.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as GatewayError {
            return error.makeResponse()
        } catch let error as UnauditedChangeResponse {
            return error.makeResponse()
        } catch let error as any GatewayErrorConvertible {
            return error.gatewayError.makeResponse()
        } catch let error as RedisError {
            // Every Redis failure that reaches here fails closed (docs/public-api.md).
            context.logger.warning("redis unavailable", metadata: ["error": "\(error)"])
            return GatewayError.serviceUnavailable.makeResponse()
        } catch let error as HTTPError {
            return GatewayError.from(status: error.status).makeResponse()
        } catch let error as any HTTPResponseError {
            return GatewayError.from(status: error.status).makeResponse()
        } catch {
            context.logger.error("unhandled error", metadata: ["error.type": "\(String(reflecting: type(of: error)))"])
            return GatewayError.internalError.makeResponse()
        }
    }
}
