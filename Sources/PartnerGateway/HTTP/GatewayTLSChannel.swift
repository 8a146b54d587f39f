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
///                                   frames, no child channel
///                                   HTTP2StreamMultiplexer: a child channel for every other
///                                   stream, set up synchronously on the event loop
///                                   (HTTP2StreamSetup)
///                                   NIOHTTP2ServerConnectionManagementHandler: idle
///                                   connections and graceful shutdown (GOAWAY, then close
///                                   once the open streams, owned or not, have ended)
///
/// Each HTTP/2 stream thus reaches the same request handling as an HTTP/1.1 request: a
/// proxied one the same proxy engine and ``ProxyExchange`` (through ``HTTP2ProxyStream``),
/// answered on the event loop; the others the same handlers, seeing the same HTTP/1 message
/// types, a stream for one of the gateway's own endpoints being handed to this connection's
/// task, which serves it with Hummingbird in a child task. The HTTP/1 connection rules of
/// ``HTTP1ConnectionHandler`` (head timeouts, keep-alive, parser errors) have HTTP/2
/// counterparts in NIOHTTP2 itself, bounded by ``HTTP2Limits``; an HTTP/2 connection with no
/// stream open for `server.idle_timeout` is closed.
struct GatewayTLSChannel: ServerChildChannel {
    /// An HTTP/2 connection's streams for the gateway's own endpoints, as they arrive.
    typealias EndpointStreams = AsyncStream<GatewayHTTP1Channel.Value>

    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<NIONegotiatedHTTPVersion<GatewayHTTP1Channel.Value, EndpointStreams>>
        let channel: any Channel
    }

    let certificates: CertificateStore
    /// The HTTP/1.1 pipeline, set up with `secure`.
    let http1: GatewayHTTP1Channel

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: certificates.current))
            channel.closeFuture.whenComplete { _ in ReleasedMemory.shared.connectionClosed() }
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        let http1 = self.http1
        return channel.configureHTTP2AsyncSecureUpgrade { channel in
            http1.setup(channel: channel, logger: logger)
        } http2ConnectionInitializer: { channel in
            channel.eventLoop.makeCompletedFuture {
                try Self.configureHTTP2(channel, http1: http1)
            }
        }
        .map { Value(negotiated: $0, channel: channel) }
    }

    /// The HTTP/2 connection's handlers and each stream's; returns the streams that reach the
    /// gateway's own endpoints.
    private static func configureHTTP2(_ channel: any Channel, http1: GatewayHTTP1Channel) throws -> EndpointStreams {
        let (endpointStreams, continuation) = EndpointStreams.makeStream()
        channel.closeFuture.whenComplete { _ in continuation.finish() }
        // The drain on shutdown is bounded by `server.drain_timeout`, as for HTTP/1.1.
        let manager = NIOHTTP2ServerConnectionManagementHandler(
            eventLoop: channel.eventLoop,
            configuration: .init(maxIdleTime: http1.idleTimeout, maxAge: nil, maxGraceTime: nil, keepalive: nil)
        )
        let configuration = HTTP2Limits.configuration(maxHeaderBytes: http1.maxHeaderBytes)
        let streamSetup = HTTP2StreamSetup(http1: http1, endpointStreams: continuation)
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
            source: http1.proxy, maxHeaderBytes: http1.maxHeaderBytes, bodyReadTimeout: http1.bodyReadTimeout
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
        return endpointStreams
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http1_1(let connection):
                await http1.handle(value: connection, logger: logger)
            case .http2(let endpointStreams):
                await withDiscardingTaskGroup { group in
                    for await stream in endpointStreams {
                        group.addTask { await http1.handleHTTP(asyncChannel: stream, logger: logger) }
                    }
                }
            }
        } catch {
            // A failed handshake or a connection reset: nothing to answer.
            logger.debug("tls connection ended", metadata: ["error": .string("\(error)")])
        }
    }
}

/// HTTP/2's own limits on the TLS listener, set explicitly rather than left to library
/// defaults (documented in docs/tls.md).
enum HTTP2Limits {
    /// Streams one client connection may have open at once (RFC 9113 recommends at least
    /// 100); more are refused with `REFUSED_STREAM`.
    static let maxConcurrentStreams = 100
    /// The flow-control window each stream starts with (the RFC's default): how much of a
    /// request body a client may send ahead of the gateway reading it.
    static let initialStreamWindow = 65_535
    /// The window the gateway keeps open per stream as it reads bodies (and for the connection).
    static let targetStreamWindow = 1 << 20
    /// Answer bytes a stream may have written and not yet sent (held back by the client's
    /// flow-control window or a full socket) before its upstream's reading stops; it starts
    /// again below the low watermark. NIOHTTP2's defaults for a child channel.
    static let streamOutboundHighWatermark = 8196
    static let streamOutboundLowWatermark = 4092
    /// How long a connection sent GOAWAY, with no stream open, waits for the client's PING
    /// acknowledgement before it is closed regardless (``HTTP2StreamRouter``).
    static let goAwayGrace = TimeAmount.seconds(2)

    /// The header list size NIOHTTP2's decoder accepts and the gateway advertises
    /// (`SETTINGS_MAX_HEADER_LIST_SIZE`), above `server.max_header_bytes`: a list over
    /// `max_header_bytes` is answered `431` in the error shape (``StreamEdgeHandler``);
    /// only one over this limit, which the decoder must refuse, costs the connection (GOAWAY).
    static func decoderHeaderListSize(maxHeaderBytes: Int) -> Int {
        4 * maxHeaderBytes
    }

    static func configuration(maxHeaderBytes: Int) -> NIOHTTP2Handler.Configuration {
        var configuration = NIOHTTP2Handler.Configuration()
        configuration.connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: decoderHeaderListSize(maxHeaderBytes: maxHeaderBytes)),
            HTTP2Setting(parameter: .initialWindowSize, value: initialStreamWindow),
        ]
        configuration.stream.targetWindowSize = targetStreamWindow
        return configuration
    }
}

/// The first handler of an HTTP/2 connection, before TLS: the client's FIN closes the socket
/// at once. HTTP/2 has no half-closed connection, but the listener allows remote half-closure
/// (for HTTP/1.1), so the FIN only announced itself; and a close through NIOSSLHandler would
/// wait up to its shutdown timeout for a close_notify the client can no longer send. Answers
/// still unsent are dropped: nobody is left to read them. Without this, a connection the client
/// closed sat in CLOSE-WAIT, with all it held, until the idle timeout.
final class HTTP2ClientCloseHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
