import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The keep-alive connections to one upstream (`host:port`), kept per event loop.
///
/// An exchange takes an idle connection on its client connection's loop, so the request, its
/// client connection and its upstream connection share one thread. When none is idle it waits
/// for one (``acquire(on:timeout:)``): connection attempts per loop are limited to
/// ``maxConnectingPerLoop``, and a new or released connection goes to the exchange that has
/// waited longest (``UpstreamPoolState``). An exchange that ends while waiting leaves the queue,
/// and the attempt made for it serves the next exchange or the idle list: a client resetting
/// streams cannot make the gateway open and abort an upstream connection per stream. There is
/// no cap on connections in use (as with nginx without `max_conns`): the route timeout and the
/// upstream's own accept backlog bound them. At most ``maxIdlePerLoop`` wait idle per loop;
/// more are closed when released.
package final class UpstreamPool: Sendable {
    /// Above the requests one loop typically has in flight: HTTP/2 clients keep up to 100
    /// streams open each, and a burst of answers releases their connections together; closing
    /// the surplus would have the next burst open them again.
    package static let maxIdlePerLoop = 512
    /// Connection attempts under way at once per event loop (docs/DECISIONS.md, "A limit on
    /// upstream connection attempts"): enough that a cold pool fills in a few round trips, few
    /// enough that a flood of requests cannot turn into a flood of sockets.
    package static let maxConnectingPerLoop = 32

    package let host: String
    package let port: Int
    /// For an `https://` upstream: its connections are made only once their handshake is done.
    package let tls: UpstreamTLSContext?
    /// The address when `host` is an IP address, or one a host name resolved to
    /// (``UpstreamAddresses``): connecting then skips the resolver (a `getaddrinfo` call and
    /// Happy Eyeballs per connection).
    private let address: SocketAddress?
    /// One share per loop of the group, made up front: a loop reads its own without a lock,
    /// and no memory the other loops write (a shared lock, one dictionary) is touched per request.
    private let shares: [ObjectIdentifier: Share]
    /// Shares of loops outside the group (tests' own loops), made on first use.
    private let otherShares = NIOLockedValueBox([ObjectIdentifier: Share]())

    /// A connection handed to a waiting exchange; `reused`: it has carried requests before.
    package struct Handed: Sendable {
        package let connection: UpstreamConnection
        package let reused: Bool
    }

    package enum Lease {
        case idle(UpstreamConnection)
        /// Wait for the future; ``leave(_:on:)`` with the ticket if the exchange ends first.
        case waiting(ticket: Int, EventLoopFuture<Handed>)
    }

    private struct Waiter: Sendable {
        package let promise: EventLoopPromise<Handed>
        package let deadline: Scheduled<Void>
    }

    /// One loop's share, read and written only on that loop.
    private final class Share: @unchecked Sendable {
        var state = UpstreamPoolState<UpstreamConnection>(maxConnecting: UpstreamPool.maxConnectingPerLoop, maxIdle: UpstreamPool.maxIdlePerLoop)
        var waiters: [Int: Waiter] = [:]
    }

    /// `resolved`: the IP address `host` resolved to, connected to instead of `host`. `group`:
    /// the event loops requests run on (the gateway's), each given its share up front.
    package init(
        host: String, port: Int, resolved: String? = nil, tls: UpstreamTLSContext? = nil,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.host = host
        self.port = port
        self.tls = tls
        address = try? SocketAddress(ipAddress: resolved ?? host, port: port)
        var shares: [ObjectIdentifier: Share] = [:]
        for loop in group.makeIterator() { shares[ObjectIdentifier(loop)] = Share() }
        self.shares = shares
    }

    /// `loop`'s share; on `loop`.
    private func share(of loop: any EventLoop) -> Share {
        loop.assertInEventLoop()
        let key = ObjectIdentifier(loop)
        if let share = shares[key] { return share }
        return otherShares.withLockedValue { others in
            if let share = others[key] { return share }
            let share = Share()
            others[key] = share
            return share
        }
    }

    /// An idle connection on `loop`, or a place in its queue; a wait longer than `timeout`
    /// fails with ``UpstreamError/refused``, like an attempt that took as long. On `loop`.
    package func acquire(on loop: any EventLoop, timeout: TimeAmount) -> Lease {
        let share = share(of: loop)
        switch share.state.acquire(usable: { $0.channel.isActive }) {
        case .idle(let connection):
            return .idle(connection)
        case .wait(let ticket, let connect):
            let promise = loop.makePromise(of: Handed.self)
            let deadline = loop.scheduleTask(in: timeout) { self.leave(ticket, on: loop, failingWith: .refused) }
            share.waiters[ticket] = Waiter(promise: promise, deadline: deadline)
            if connect { attempt(on: loop, timeout: timeout) }
            return .waiting(ticket: ticket, promise.futureResult)
        }
    }

    /// The exchange holding `ticket` no longer waits.
    package func leave(_ ticket: Int, on loop: any EventLoop) {
        leave(ticket, on: loop, failingWith: .closed)
    }

    private func leave(_ ticket: Int, on loop: any EventLoop, failingWith error: UpstreamError) {
        let share = share(of: loop)
        guard share.state.leave(ticket), let waiter = share.waiters.removeValue(forKey: ticket) else { return }
        waiter.deadline.cancel()
        waiter.promise.fail(error)
    }

    /// Hands a connection back after its response ended, on its own event loop; closes it
    /// when it cannot be reused.
    package func releaseOnLoop(_ connection: UpstreamConnection) {
        guard connection.handlerOnLoop.isReusable else {
            connection.abort(.closed)
            return
        }
        let share = share(of: connection.eventLoop)
        hand(connection, reused: true, share.state.offer(connection), from: share)
    }

    private func hand(_ connection: UpstreamConnection, reused: Bool, _ offered: UpstreamPoolState<UpstreamConnection>.Offered, from share: Share) {
        switch offered {
        case .kept:
            break
        case .close:
            connection.abort(.closed)
        case .toWaiter(let ticket):
            guard let waiter = share.waiters.removeValue(forKey: ticket) else { return }
            waiter.deadline.cancel()
            // On the next tick: a connection released by an exchange is still inside its
            // response's last read, which must end before another request starts on it.
            connection.eventLoop.execute {
                waiter.promise.succeed(Handed(connection: connection, reused: reused))
            }
        }
    }

    /// One connection attempt for the queue of `loop`.
    private func attempt(on loop: any EventLoop, timeout: TimeAmount) {
        connect(on: loop, timeout: timeout).whenComplete { result in
            let share = self.share(of: loop)
            switch result {
            case .success(let connection):
                let (offered, more) = share.state.connected(connection)
                self.hand(connection, reused: false, offered, from: share)
                for _ in 0..<more { self.attempt(on: loop, timeout: timeout) }
            case .failure:
                let (ticket, more) = share.state.connectFailed()
                let failed = ticket.flatMap { share.waiters.removeValue(forKey: $0) }
                failed?.deadline.cancel()
                failed?.promise.fail(UpstreamError.refused)
                for _ in 0..<more { self.attempt(on: loop, timeout: timeout) }
            }
        }
    }

    /// A new connection on `loop`; fails with ``UpstreamError/refused``.
    private func connect(on loop: any EventLoop, timeout: TimeAmount) -> EventLoopFuture<UpstreamConnection> {
        let tls = self.tls
        let handshake = NIOLockedValueBox<EventLoopFuture<Void>?>(nil)
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(timeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
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
