import GatewayEdge
import GatewayProxy
import NIOCore
import NIOHTTP2

/// How each stream of one HTTP/2 connection that gets a child channel is set up
/// (``GatewayTLSChannel``; proxied streams are answered by ``HTTP2StreamRouter`` and get
/// none), made once per connection rather than per stream:
///
///     HTTP2StreamEndMerger                 the last DATA frame carries END_STREAM
///     HTTP2FramePayloadToHTTP1ServerCodec
///     StreamEdgeHandler                    the request edge (RequestEdge): rules, limits;
///                                          answers the heads HTTP2StreamRouter passed on
///                                          for refusal
///     EndpointResponder                the gateway's own endpoints
///
/// No proxy engine here: a request a route takes is the router's, and a stream the router
/// passes on is never proxied (the router reads every head first, with the same rules).
///
/// Why a class: the stream initializer runs for every request, and copying the listener's
/// settings (``GatewayHTTP1Channel``, with the ``ProxyEngine`` inside: structs of many
/// references) into each stream's closure and handlers would retain and release every
/// reference per stream; the handlers share this one object instead.
final class HTTP2StreamSetup: Sendable {
    let http1: GatewayHTTP1Channel
    private let proxiedRoutes: (any ProxiedPaths)?

    init(http1: GatewayHTTP1Channel) {
        self.http1 = http1
        proxiedRoutes = http1.proxiedPaths
    }

    func addHandlers(to stream: any Channel) throws {
        let pipeline = stream.pipeline.syncOperations
        try pipeline.addHandler(HTTP2StreamEndMerger())
        try pipeline.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
        // The edge rules HTTP/1 requests get from HTTP1ConnectionHandler.
        try pipeline.addHandler(StreamEdgeHandler(
            maxHeaderBytes: http1.maxHeaderBytes,
            bodyReadTimeout: http1.bodyReadTimeout,
            proxiedRoutes: proxiedRoutes
        ))
        try pipeline.addHandler(EndpointResponder(endpoints: http1.endpoints, secure: http1.secure))
    }
}
