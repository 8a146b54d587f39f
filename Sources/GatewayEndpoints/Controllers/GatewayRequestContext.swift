import GatewayObservability
import Hummingbird
import NIOCore

/// What every handler and middleware knows about the request beyond the request itself.
package struct GatewayRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The socket peer; the client IP unless a trusted proxy says otherwise.
    let peerAddress: SocketAddress?
    /// `X-Request-Id`, set by `RequestIDMiddleware` before anything else runs.
    var requestID = ""
    /// The request's trace id, set by `ServerSpanMiddleware` when tracing is on.
    var traceID: String?
    /// What the access line reports beyond the request and response (``RequestFacts``).
    let facts = RequestFacts()

    package init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.peerAddress = source.channel.remoteAddress
    }

    /// Bodies the gateway itself reads (auth and admin JSON) are small; proxied bodies stream
    /// and are limited separately by `max_body_bytes`.
    package var maxUploadSize: Int { Self.bodyLimit }

    /// What the endpoints read of a request body at most (``JSONBody``); ``EndpointResponder``
    /// keeps no more of one.
    package static let bodyLimit = 64 * 1024
}
