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
///     HTTPResponseEncoder / HTTPRequestDecoder
///                                proxied responses are written below the encoder, as bytes
///     HTTP1ConnectionHandler     the connection: request edge (RequestEdge), order of
///                                requests and answers, keep-alive, timeouts, shutdown, and on
///                                the public listener the proxy engine (every request for a
///                                route, on the event loop), on the authorization listener the
///                                forward authorizer (`/forward`); one state machine for all of it
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
struct GatewayHTTP1Channel: ServerChildChannel {
    /// A connection as the server holds it: its handlers serve it, no task.
    struct Value: ServerChildChannelValue {
        let channel: any Channel
    }

    /// The listener's own endpoints.
    let endpoints: Endpoints
    let headerReadTimeout: TimeAmount
    let idleTimeout: TimeAmount
    let bodyReadTimeout: TimeAmount
    /// The decoder's limit for one header field and for all of them (431 beyond it).
    let maxHeaderBytes: Int
    /// Who takes requests before the endpoints: the proxy engine on the public listener, the
    /// forward authorizer on the authorization listener; none on the admin listener.
    let proxy: (any ProxiedRequestSource & Sendable)?
    /// The paths `proxy` takes (their bodies are timed between reads).
    let proxiedPaths: (any ProxiedPaths)?
    /// Whether the connection came over TLS (the requests' scheme).
    let secure: Bool
    /// The listener's open connections, which its graceful shutdown waits for.
    let drain = ConnectionDrain()
    /// The listener's idle connections, parked without their HTTP handlers.
    let parking = ConnectionParking()

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            // Over TLS, GatewayTLSChannel tells ReleasedMemory of the connection.
            drain.opened(channel, releasesMemory: !secure)
            if secure {
                try pipeline.addHandler(TLSWriteBatcher())
            } else {
                // A buffer per read, none kept while idle (TransientReadBuffers).
                let options = channel.syncOptions
                try options?.setOption(ChannelOptions.maxMessagesPerRead, value: 1)
                try options?.setOption(ChannelOptions.recvAllocator, value: TransientReadBuffers())
            }
            try addHTTPHandlers(to: pipeline, watcher: nil)
            return Value(channel: channel)
        }
    }

    /// The HTTP handlers; a parked connection gives them up (``ConnectionParking``). `watcher`
    /// is the connection's ``RequestStartWatcher`` when it has one already (back from a parking).
    ///
    /// NIO's codec without its helpers: HTTP1ConnectionHandler keeps answers in order and
    /// answers parser errors, and fields are validated where they are made (HTTPTypes, the
    /// parser). Not `configureHTTPServerPipeline`: it pairs the decoder with the encoder, which
    /// then expects a response through it for every request read, and proxied responses pass
    /// it by.
    private func addHTTPHandlers(to pipeline: ChannelPipeline.SynchronousOperations, watcher: RequestStartWatcher?) throws {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = maxHeaderBytes
        limits.maxHeaderListSize = maxHeaderBytes
        try pipeline.addHandler(HTTPResponseEncoder(configuration: .init()), name: Self.encoderName)
        try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes, limitConfiguration: limits)), name: Self.decoderName)
        try pipeline.addHandler(HTTP1ConnectionHandler(
            headerReadTimeout: headerReadTimeout,
            idleTimeout: idleTimeout,
            bodyReadTimeout: bodyReadTimeout,
            proxy: proxy,
            proxiedRoutes: proxiedPaths,
            watcher: watcher,
            // Over TLS the watcher sees the records, not the requests' bytes, and a connection
            // costs its TLS state far beyond what parking would save.
            parking: secure ? nil : (parking, self)
        ), name: Self.connectionName)
        try pipeline.addHandler(EndpointResponder(endpoints: endpoints, secure: secure), name: Self.endpointsName)
    }

    private static let encoderName = "http1-encoder"
    private static let decoderName = "http1-decoder"
    private static let connectionName = "http1-connection"
    private static let endpointsName = "endpoints"

    /// Nothing to do but hold the connection open for the server's graceful shutdown, which
    /// waits for its connections' tasks: one task waits for all of them (``ConnectionDrain``).
    func handle(value: Value, logger: Logger) async {
        await drain.waitUnlessWaited()
    }
}

extension HTTPServerBuilder {
    /// The gateway's HTTP/1.1 pipeline (``GatewayHTTP1Channel``) with the server settings of
    /// `config`, answering with `endpoints` and the proxy engine when given one; behind TLS
    /// with HTTP/2 as well (``GatewayTLSChannel``) when given the listener's certificates.
    /// Hummingbird's own responder (its server loop's) goes unused (``Endpoints``).
    package static func gateway(
        _ config: GatewayConfig.Server, endpoints: Endpoints, proxy: ProxyEngine? = nil, certificates: CertificateStore? = nil
    ) -> HTTPServerBuilder {
        gateway(config, endpoints: endpoints, source: proxy, paths: proxy?.routes, certificates: certificates)
    }

    /// The authorization listener's: `/forward` answered by `authorizer`, the rest by `endpoints`.
    package static func gateway(
        _ config: GatewayConfig.Server, endpoints: Endpoints, authorizer: ForwardAuthorizer, certificates: CertificateStore? = nil
    ) -> HTTPServerBuilder {
        gateway(config, endpoints: endpoints, source: authorizer, paths: authorizer, certificates: certificates)
    }

    private static func gateway(
        _ config: GatewayConfig.Server, endpoints: Endpoints, source: (any ProxiedRequestSource & Sendable)?, paths: (any ProxiedPaths)?,
        certificates: CertificateStore?
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { _ in
            HTTP1CodecWarmUp.run()
            let http1 = GatewayHTTP1Channel(
                endpoints: endpoints,
                headerReadTimeout: TimeAmount(config.headerReadTimeout.duration),
                idleTimeout: TimeAmount(config.idleTimeout.duration),
                bodyReadTimeout: TimeAmount(config.bodyReadTimeout.duration),
                maxHeaderBytes: config.maxHeaderBytes,
                proxy: source,
                proxiedPaths: paths,
                secure: certificates != nil
            )
            guard let certificates else { return http1 }
            return GatewayTLSChannel(certificates: certificates, http1: http1)
        }
    }
}

extension GatewayHTTP1Channel: ParkableHandlers {
    func addRequestHandlers(to pipeline: ChannelPipeline.SynchronousOperations, watcher: RequestStartWatcher) throws {
        // The decoder leaves at the end of the loop tick it was removed in, before any read.
        if (try? pipeline.context(name: Self.decoderName)) != nil { throw ChannelError.inappropriateOperationForState }
        try addHTTPHandlers(to: pipeline, watcher: watcher)
    }

    func removeRequestHandlers(from pipeline: ChannelPipeline.SynchronousOperations) {
        for name in [Self.endpointsName, Self.connectionName, Self.decoderName, Self.encoderName] {
            pipeline.removeHandler(name: name, promise: nil)
        }
    }
}
