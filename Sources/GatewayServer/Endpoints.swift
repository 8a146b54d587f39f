import GatewayEdge
import GatewayEndpoints
import Hummingbird
import Logging
import NIOCore

/// A listener's own endpoints: its router (and the router's middleware) asked for the answer
/// to one whole request. ``EndpointResponder`` calls it for every request no route takes, on
/// HTTP/1.1 and HTTP/2 alike.
///
/// Why not Hummingbird's server loop: that loop reads a connection's requests from an async
/// channel and writes the answers through NIO's async writer, a suspension and a lock for
/// every part; the router needs neither (docs/DECISIONS.md, "Endpoints answered from the
/// event loop").
package final class Endpoints: Sendable {
    package let responder: RouterResponder<GatewayRequestContext>
    private let logger: Logger

    package init(router: Router<GatewayRequestContext>, logger: Logger) {
        responder = router.buildResponder()
        self.logger = logger
    }

    /// The answer to `request`, never an error: one the router's middleware did not turn into
    /// an answer (none is expected: the error middleware answers every error) is `500` in the
    /// gateway's error shape. Every answer carries `Date`, as an origin server's must.
    func respond(to request: Request, channel: any Channel) async -> Response {
        let context = GatewayRequestContext(source: .init(channel: channel, logger: logger))
        var response: Response
        do {
            response = try await responder.respond(to: request, context: context)
        } catch {
            logger.error("endpoint error left unanswered by the middleware", metadata: ["error.type": "\(type(of: error))"])
            response = GatewayError.internalError.makeResponse()
        }
        response.headers[.date] = ResponseDate.shared.now
        return response
    }
}
