import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The keep-alive connections to one upstream (`host:port`), kept per event loop.
///
/// An exchange takes an idle connection on its client connection's loop, so the request, its
/// client connection and its upstream connection share one thread; a new connection is made
/// when none is idle. There is no cap on connections in use (as with nginx without
/// `max_conns`): the route timeout and the upstream's own accept backlog bound them. At most
/// ``maxIdlePerLoop`` wait idle per loop; more are closed when released.
final class UpstreamPool: Sendable {
    /// Above the requests one loop typically has in flight: HTTP/2 clients keep up to 100
    /// streams open each, and a burst of answers releases their connections together. With
    /// 128, 16 HTTP/2 clients of 16 streams each (`benchmarks/tls.sh`) made a new upstream
    /// connection for about one request in ten; with 512, none.
    static let maxIdlePerLoop = 512

    let host: String
    let port: Int
    /// For an `https://` upstream: its connections are made only once their handshake is done.
    let tls: UpstreamTLSContext?
    /// The address when `host` is an IP address: connecting then skips the resolver (a
    /// `getaddrinfo` call and Happy Eyeballs per connection).
    private let address: SocketAddress?
    private let group: any EventLoopGroup
    private let idle = NIOLockedValueBox([ObjectIdentifier: [UpstreamConnection]]())

    init(host: String, port: Int, tls: UpstreamTLSContext? = nil, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.host = host
        self.port = port
        self.tls = tls
        self.group = group
        address = try? SocketAddress(ipAddress: host, port: port)
    }

    /// An idle connection on `loop`, if one is open.
    func idleConnection(on loop: any EventLoop) -> UpstreamConnection? {
        let key = ObjectIdentifier(loop)
        while let candidate = idle.withLockedValue({ $0[key]?.popLast() }) {
            if candidate.channel.isActive { return candidate }
        }
        return nil
    }

    /// Hands a connection back after its response ended, on its own event loop; closes it
    /// when it cannot be reused.
    func releaseOnLoop(_ connection: UpstreamConnection) {
        guard connection.handlerOnLoop.isReusable else {
            connection.abort(.closed)
            return
        }
        keep(connection)
    }

    private func keep(_ connection: UpstreamConnection) {
        let key = ObjectIdentifier(connection.eventLoop)
        let kept = idle.withLockedValue { idle -> Bool in
            guard idle[key, default: []].count < Self.maxIdlePerLoop else { return false }
            idle[key, default: []].append(connection)
            return true
        }
        if !kept { connection.abort(.closed) }
    }

    /// A new connection on `loop`; fails with ``UpstreamError/refused``.
    func connect(on loop: any EventLoop, timeout: TimeAmount) -> EventLoopFuture<UpstreamConnection> {
        let tls = self.tls
        let handshake = NIOLockedValueBox<EventLoopFuture<Void>?>(nil)
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(timeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            // Read only when a response part is wanted: back-pressure from the client.
            .channelOption(.autoRead, value: false)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        let done = try tls.addHandlers(to: channel, timeout: timeout)
                        handshake.withLockedValue { $0 = done }
                    }
                    try UpstreamResponseHandler.addHandlers(to: channel)
                }
            }
        let connected = address.map { bootstrap.connect(to: $0) } ?? bootstrap.connect(host: host, port: port)
        return connected
            .flatMap { [host, port] channel in
                guard let tls, let done = handshake.withLockedValue({ $0 }) else { return loop.makeSucceededFuture(channel) }
                return done.map { channel }.flatMapErrorThrowing { error in
                    tls.logFailure(error, upstream: "\(host):\(port)")
                    channel.close(promise: nil)
                    throw error
                }
            }
            .flatMapThrowing { channel in
                let handler = try channel.pipeline.syncOperations.handler(type: UpstreamResponseHandler.self)
                return UpstreamConnection(channel: channel, handler: handler)
            }
            .flatMapErrorThrowing { _ in throw UpstreamError.refused }
    }
}
