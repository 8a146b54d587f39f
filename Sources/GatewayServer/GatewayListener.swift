#if canImport(Glibc)
import Glibc
#endif
import GatewayConfiguration
import GatewayEdge
import GatewayProxy
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// One listening socket and its connections, as a service: binds, accepts until a graceful
/// shutdown, then drains. In place of Hummingbird's server, whose listener closes the moment
/// shutdown begins (a connection still in its accept queue is then reset) and cannot share its
/// port with another process.
///
/// The drain, in order:
/// 1. with `server.reuse_port`, new connections go to the gateway that took over
///    (``ReusePortSteering``);
/// 2. every open connection is told to wind down (``ConnectionDrain``): HTTP/1.1 answers
///    `Connection: close` from now on and closes an idle connection after
///    ``HTTP1ConnectionHandler/StateMachine/drainIdleGrace``, HTTP/2 sends `GOAWAY`, WebSockets
///    are sent `1001`, event streams end at an event's end;
/// 3. with `server.reuse_port`, the listener accepts what its queue still holds for
///    ``handOverTime``, then the listening socket closes (without it, it closed first);
/// 4. it waits until every connection has closed, within `server.drain_timeout` (the service
///    group's limit); past it, the rest are closed.
package struct GatewayListener: Service {
    private let address: ListenAddress
    private let connections: any ConnectionSetup
    private let backlog: Int
    private let acceptsPerWakeUp: UInt?
    private let reusePort: Bool
    private let drain = ConnectionDrain()
    private let logger: Logger
    /// Told the bound address once the socket listens.
    private let onListening: @Sendable (SocketAddress) -> Void

    /// How long a draining listener that shares its port still accepts: the handshakes that
    /// reached it before it handed the port over complete within a round trip.
    package static let handOverTime = Duration.seconds(1)

    /// The listener at `address` with the gateway's connection pipeline for `config`: answered
    /// by `endpoints` and, when given one, the proxy engine; TLS with HTTP/2 when given the
    /// listener's certificates.
    package init(
        address: ListenAddress,
        server config: GatewayConfig.Server,
        endpoints: Endpoints,
        proxy: ProxyEngine? = nil,
        certificates: CertificateStore? = nil,
        backlog: Int = 256,
        acceptsPerWakeUp: UInt? = nil,
        logger: Logger,
        onListening: @escaping @Sendable (SocketAddress) -> Void = { _ in }
    ) {
        self.init(
            address: address, server: config, endpoints: endpoints, source: proxy, paths: proxy?.routes, certificates: certificates,
            backlog: backlog, acceptsPerWakeUp: acceptsPerWakeUp, logger: logger, onListening: onListening
        )
    }

    /// The authorization listener's: `/forward` answered by `authorizer`, the rest by `endpoints`.
    package init(
        address: ListenAddress,
        server config: GatewayConfig.Server,
        endpoints: Endpoints,
        authorizer: ForwardAuthorizer,
        certificates: CertificateStore? = nil,
        backlog: Int = 256,
        logger: Logger,
        onListening: @escaping @Sendable (SocketAddress) -> Void = { _ in }
    ) {
        self.init(
            address: address, server: config, endpoints: endpoints, source: authorizer, paths: authorizer, certificates: certificates,
            backlog: backlog, acceptsPerWakeUp: nil, logger: logger, onListening: onListening
        )
    }

    private init(
        address: ListenAddress,
        server config: GatewayConfig.Server,
        endpoints: Endpoints,
        source: (any ProxiedRequestSource & Sendable)?,
        paths: (any ProxiedPaths)?,
        certificates: CertificateStore?,
        backlog: Int,
        acceptsPerWakeUp: UInt?,
        logger: Logger,
        onListening: @escaping @Sendable (SocketAddress) -> Void
    ) {
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
        connections = certificates.map { GatewayTLSChannel(certificates: $0, http1: http1) } ?? http1
        self.address = address
        self.backlog = backlog
        self.acceptsPerWakeUp = acceptsPerWakeUp
        reusePort = config.reusePort
        self.logger = logger
        self.onListening = onListening
    }

    package func run() async throws {
        HTTP1CodecWarmUp.run()
        let server = try await bind()
        if reusePort { await ReusePortSteering.preferEarliest(server) }
        if let bound = server.localAddress { onListening(bound) }
        logger.info("Server started and listening on \(address.host):\(server.localAddress?.port ?? address.port)")
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled without a graceful shutdown: nothing waits.
            try? await server.close()
            drain.closeAll()
            return
        }
        // New connections go elsewhere (or nowhere) before any client is told to go: one told
        // (a WebSocket's 1001, a Connection: close) comes back on a new connection, which must
        // not land here.
        if reusePort {
            await ReusePortSteering.preferLatest(server)
            drain.begin()
            try? await Task.sleep(for: Self.handOverTime)
            try? await server.close()
        } else {
            try? await server.close()
            drain.begin()
        }
        await withTaskCancellationHandler {
            await drain.allClosed()
        } onCancel: {
            drain.closeAll()
        }
    }

    private func bind() async throws -> any Channel {
        let connections = self.connections
        let drain = self.drain
        let logger = self.logger
        var bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: Int32(backlog))
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            // The listener allows half-closure: a client that sent all it will is still answered.
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                drain.opened(channel)
                return connections.setup(channel: channel, logger: logger) { drain.ready(channel) }
            }
        if reusePort {
            bootstrap = bootstrap.serverChannelOption(ChannelOptions.socketOption(NIOBSDSocket.Option(rawValue: SO_REUSEPORT)), value: 1)
        }
        if let acceptsPerWakeUp {
            bootstrap = bootstrap.serverChannelOption(ChannelOptions.maxMessagesPerRead, value: acceptsPerWakeUp)
        }
        return try await bootstrap.bind(host: address.host, port: address.port).get()
    }
}
