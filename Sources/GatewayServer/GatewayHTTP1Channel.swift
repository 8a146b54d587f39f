import GatewayConfiguration
import GatewayEdge
import GatewayProxy
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// A listener's HTTP/1.1 connection pipeline, in place of Hummingbird's `HTTP1Channel`:
///
///     TLSWriteBatcher            over TLS only: a response's head and body in one record
///     RequestStartWatcher        raw bytes: when a request starts arriving
///     HTTPResponseEncoder        NIO's encoder, for the endpoints' responses; proxied
///                                responses are written below it, as bytes
///     HTTP1ConnectionHandler     the connection: the gateway's strict request parser
///                                (HTTP1RequestParser) on each read's bytes, the request
///                                edge (RequestEdge), order of requests and answers,
///                                keep-alive, timeouts, shutdown, and on the public listener
///                                the proxy engine (every request for a route, on the event
///                                loop), on the authorization listener the forward authorizer
///                                (`/forward`); one state machine for all of it
///     EndpointResponder          every other request: the gateway's own endpoints (Hummingbird's
///                                router), a task per request on the connection's event loop
///
/// An idle connection parks (``ConnectionParking``): everything after the watcher leaves the
/// pipeline until the next byte, and ``addRequestHandlers(to:watcher:)`` puts it back.
///
/// Why not Hummingbird's own: its extra handlers can only go after its HTTPTypes codec, and
/// its idle and shutdown handler last. The proxy engine belongs before the codec, so that no
/// proxied head is converted to HTTPTypes and back, and the connection rules must see its
/// requests too. Nor its server loop for the endpoints (``Endpoints``).
struct GatewayHTTP1Channel: ConnectionSetup {
    /// The listener's own endpoints.
    let endpoints: Endpoints
    let headerReadTimeout: TimeAmount
    let idleTimeout: TimeAmount
    let bodyReadTimeout: TimeAmount
    /// The parser's limit for a request head (431 beyond it).
    let maxHeaderBytes: Int
    /// Who takes requests before the endpoints: the proxy engine on the public listener, the
    /// forward authorizer on the authorization listener; none on the admin listener.
    let proxy: (any ProxiedRequestSource & Sendable)?
    /// The paths `proxy` takes, for HTTP/2 streams that get a child channel (their bodies are
    /// timed between reads).
    let proxiedPaths: (any ProxiedPaths)?
    /// Whether the connection came over TLS (the requests' scheme).
    let secure: Bool
    /// The listener's idle connections, parked without their HTTP handlers.
    let parking = ConnectionParking()

    func setup(channel: any Channel, logger: Logger, ready: @escaping @Sendable () -> Void) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            if secure {
                try pipeline.addHandler(TLSWriteBatcher())
            } else {
                // Over TLS, GatewayTLSChannel tells ReleasedMemory of the connection.
                channel.closeFuture.whenComplete { _ in ReleasedMemory.shared.connectionReleased() }
                // A buffer per read, none kept while idle (TransientReadBuffers).
                let options = channel.syncOptions
                try options?.setOption(ChannelOptions.maxMessagesPerRead, value: 1)
                try options?.setOption(ChannelOptions.recvAllocator, value: TransientReadBuffers())
            }
            try addHTTPHandlers(to: pipeline, watcher: nil)
            ready()
        }
    }

    /// The HTTP handlers; a parked connection gives them up (``ConnectionParking``). `watcher`
    /// is the connection's ``RequestStartWatcher`` when it has one already (back from a parking).
    ///
    /// NIO's encoder without NIO's helpers: HTTP1ConnectionHandler parses requests, keeps answers
    /// in order and answers parser errors, and fields are validated where they are made
    /// (HTTPTypes, the parser). Not `configureHTTPServerPipeline`: it pairs a decoder with the
    /// encoder, which then expects a response through it for every request read, and proxied
    /// responses pass it by.
    private func addHTTPHandlers(to pipeline: ChannelPipeline.SynchronousOperations, watcher: RequestStartWatcher?) throws {
        try pipeline.addHandler(HTTPResponseEncoder(configuration: .init()), name: Self.encoderName)
        try pipeline.addHandler(HTTP1ConnectionHandler(
            headerReadTimeout: headerReadTimeout,
            idleTimeout: idleTimeout,
            bodyReadTimeout: bodyReadTimeout,
            maxHeadBytes: maxHeaderBytes,
            proxy: proxy,
            anchoredPrefix: proxiedPaths?.anchoredPrefix,
            watcher: watcher,
            // Over TLS the watcher sees the records, not the requests' bytes, and a connection
            // costs its TLS state far beyond what parking would save.
            parking: secure ? nil : (parking, self)
        ), name: Self.connectionName)
        try pipeline.addHandler(EndpointResponder(endpoints: endpoints, secure: secure), name: Self.endpointsName)
    }

    private static let encoderName = "http1-encoder"
    private static let connectionName = "http1-connection"
    private static let endpointsName = "endpoints"
}

extension GatewayHTTP1Channel: ParkableHandlers {
    func addRequestHandlers(to pipeline: ChannelPipeline.SynchronousOperations, watcher: RequestStartWatcher) throws {
        // Never a second set beside the first.
        if (try? pipeline.context(name: Self.connectionName)) != nil { throw ChannelError.inappropriateOperationForState }
        try addHTTPHandlers(to: pipeline, watcher: watcher)
    }

    func removeRequestHandlers(from pipeline: ChannelPipeline.SynchronousOperations) {
        for name in [Self.endpointsName, Self.connectionName, Self.encoderName] {
            pipeline.removeHandler(name: name, promise: nil)
        }
    }
}
