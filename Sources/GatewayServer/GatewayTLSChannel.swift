import GatewayEdge
import GatewayProxy
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL
import NIOTLS

/// A TLS listener's connection pipeline: TLS with the certificate of the moment, then HTTP/2
/// or HTTP/1.1 as ALPN chose (a client offering neither gets HTTP/1.1).
///
///     HTTP2ClientCloseHandler       (HTTP/2 only) the client's FIN closes the socket at once
///     NIOSSLServerHandler           context taken from the CertificateStore at accept
///     ALPN "http/1.1" or none  →    GatewayHTTP1Channel's pipeline, unchanged
///     ALPN "h2"                →    TLSWriteBatcher: one TLS write per event-loop tick
///                                   NIOHTTP2Handler, passing frames down the pipeline
///                                   HTTP2StreamRouter: proxied streams, answered from the
///                                   frames, no child channel; the idle timeout
///                                   HTTP2StreamMultiplexer: a child channel for every other
///                                   stream, set up synchronously on the event loop
///                                   (HTTP2StreamSetup)
///                                   NIOHTTP2ServerConnectionManagementHandler: graceful
///                                   shutdown, idle or draining (GOAWAY, then close once
///                                   the open streams, owned or not, have ended)
///
/// Each HTTP/2 stream thus reaches the same request handling as an HTTP/1.1 request: a
/// proxied one the same proxy engine and ``ProxyExchange`` (through ``HTTP2ProxyStream``),
/// answered on the event loop; the others the same handlers, seeing the same HTTP/1 message
/// types, down to the same ``EndpointResponder`` for the gateway's own endpoints. The HTTP/1
/// connection rules of ``HTTP1ConnectionHandler`` (head timeouts, keep-alive, parser errors)
/// have HTTP/2 counterparts in NIOHTTP2 itself, bounded by ``HTTP2Limits``; an HTTP/2
/// connection with no stream open for `server.idle_timeout` is closed.
struct GatewayTLSChannel: ConnectionSetup {
    let certificates: CertificateStore
    /// The HTTP/1.1 pipeline, set up with `secure`.
    let http1: GatewayHTTP1Channel

    func setup(channel: any Channel, logger: Logger, ready: @escaping @Sendable () -> Void) -> EventLoopFuture<Void> {
        do {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: certificates.current))
            channel.closeFuture.whenComplete { _ in ReleasedMemory.shared.connectionReleased() }
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        let http1 = self.http1
        return channel.configureHTTP2SecureUpgrade { channel in
            channel.eventLoop.makeCompletedFuture {
                try Self.configureHTTP2(channel, http1: http1)
                ready()
            }
        } http1ChannelConfigurator: { channel in
            http1.setup(channel: channel, logger: logger, ready: ready)
        }
    }

    /// The HTTP/2 connection's handlers and each stream's.
    private static func configureHTTP2(_ channel: any Channel, http1: GatewayHTTP1Channel) throws {
        // The drain on shutdown is bounded by `server.drain_timeout`, as for HTTP/1.1; the
        // router times idleness (HTTP2StreamRouter: the manager's timer costs every stream).
        let manager = NIOHTTP2ServerConnectionManagementHandler(
            eventLoop: channel.eventLoop,
            configuration: .init(maxIdleTime: nil, maxAge: nil, maxGraceTime: nil, keepalive: nil)
        )
        let configuration = HTTP2Limits.configuration(maxHeaderBytes: http1.maxHeaderBytes)
        let streamSetup = HTTP2StreamSetup(http1: http1)
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(HTTP2ClientCloseHandler(), position: .first)
        try pipeline.addHandler(TLSWriteBatcher())
        // Frames down the connection's pipeline (NIOHTTP2's non-inline mode), so proxied
        // streams are answered from them before the multiplexer makes child channels.
        try pipeline.addHandler(NIOHTTP2Handler(
            mode: .server,
            connectionConfiguration: configuration.connection,
            streamConfiguration: configuration.stream
        ))
        try pipeline.addHandler(HTTP2StreamRouter(
            source: http1.proxy, maxHeaderBytes: http1.maxHeaderBytes, bodyReadTimeout: http1.bodyReadTimeout,
            idleTimeout: http1.idleTimeout, anchoredPrefix: http1.proxiedPaths?.anchoredPrefix
        ))
        try pipeline.addHandler(HTTP2StreamMultiplexer(
            mode: .server,
            channel: channel,
            targetWindowSize: configuration.stream.targetWindowSize,
            outboundBufferSizeHighWatermark: HTTP2Limits.streamOutboundHighWatermark,
            outboundBufferSizeLowWatermark: HTTP2Limits.streamOutboundLowWatermark
        ) { stream in
            stream.eventLoop.makeCompletedFuture { try streamSetup.addHandlers(to: stream) }
        })
        // After the multiplexer: it sees every stream open and close as events, owned or not.
        try pipeline.addHandler(manager)
    }
}
