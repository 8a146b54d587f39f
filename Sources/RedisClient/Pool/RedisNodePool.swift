import Logging
import NIOCore
import NIOPosix
import Synchronization

/// The connections to one Redis node: a fixed set of pipelined connections, spread over the
/// event loops, opened lazily and reopened after any failure.
///
/// ``RedisStandalonePool`` and ``RedisSentinelPool`` keep one for their primary,
/// ``RedisClusterPool`` one per node. While the node is down each connection place redials at most once
/// per `reconnectBackoff`, and in between fails at once.
final class RedisNodePool: Sendable {
    /// The settings this node is dialled with: on a cluster, the URL points at the node.
    let configuration: RedisConfiguration
    /// The node's `host:port` as configured (with Sentinel, not the primary found).
    let address: RedisNodeAddress
    private let places: [Place]
    /// The places of each event loop, so a caller running on a loop is given a connection on
    /// that same loop: its command and reply then cost no thread hop.
    private let placesByLoop: [ObjectIdentifier: [Place]]
    private let cursor = Atomic<Int>(0)
    private let logger: Logger
    private let observer: RedisPoolObserver?
    /// Runs when an open connection breaks: the node may be gone (a failover), so whoever
    /// knows where the primary is should ask again.
    private let onConnectionLost: @Sendable () -> Void

    init(
        configuration: RedisConfiguration,
        eventLoopGroup: any EventLoopGroup,
        logger: Logger,
        observer: RedisPoolObserver?,
        onConnectionLost: @escaping @Sendable () -> Void
    ) {
        self.configuration = configuration
        self.address = RedisNodeAddress(host: configuration.url.host, port: configuration.url.port)
        self.logger = logger
        self.observer = observer
        self.onConnectionLost = onConnectionLost
        let places = (0..<configuration.poolSize).map { _ in Place(eventLoop: eventLoopGroup.next()) }
        self.places = places
        self.placesByLoop = Dictionary(grouping: places) { ObjectIdentifier($0.eventLoop) }
    }

    /// An open connection, preferably on `eventLoop` (the caller's), dialled within the time
    /// left until `deadline` when none is open.
    func connection(on eventLoop: (any EventLoop)?, deadline: NIODeadline) -> EventLoopFuture<RedisConnection> {
        let place = nextPlace(on: eventLoop)
        let now = NIODeadline.now()
        let backoff = TimeAmount(configuration.reconnectBackoff)
        enum Next {
            case use(RedisConnection)
            case wait(EventLoopFuture<RedisConnection>)
            case dial(EventLoopPromise<RedisConnection>)
            case fail(RedisError)
        }
        let next: Next = place.state.withLock { state in
            switch state {
            case .connected(let connection) where connection.isActive:
                return .use(connection)
            case .connecting(let future):
                return .wait(future)
            case .failed(let at, let error) where now < at + backoff:
                return .fail(error)
            case .closed:
                return .fail(.poolClosed)
            case .connected, .failed, .idle:
                let promise = place.eventLoop.makePromise(of: RedisConnection.self)
                state = .connecting(promise.futureResult)
                return .dial(promise)
            }
        }
        switch next {
        case .use(let connection):
            return place.eventLoop.makeSucceededFuture(connection)
        case .fail(let error):
            // This place's last dial failed moments ago; another may already be back.
            if let healthy = anyHealthyConnection() { return place.eventLoop.makeSucceededFuture(healthy) }
            return place.eventLoop.makeFailedFuture(error)
        case .wait(let future):
            return future
        case .dial(let promise):
            dial(place, promise: promise, budget: Duration(deadline - now))
            return promise.futureResult
        }
    }

    /// ``connection(on:deadline:)`` for a task (the slot-map reads, which ask one node directly).
    func connection(deadline: NIODeadline) async throws -> RedisConnection {
        try await connection(on: MultiThreadedEventLoopGroup.currentEventLoop, deadline: deadline).get()
    }

    /// The first connected connection of `eventLoop`'s places (any place's, when the pool has
    /// none there), or nil when none is: for callers that cannot wait for a dial. Always the
    /// same one while it stays open, so every command a loop tick writes shares one flush and
    /// Redis reads them with one syscall; rotating per command split a tick's commands over
    /// the loop's connections (a keyed request cost Redis 1.6 times as much). The loop's
    /// other connections take over when it breaks, and carry the calls of tasks.
    func readyConnection(on eventLoop: any EventLoop) -> RedisConnection? {
        for place in placesByLoop[ObjectIdentifier(eventLoop)] ?? places {
            let connection: RedisConnection? = place.state.withLock { state in
                if case .connected(let connection) = state, connection.isActive { return connection }
                return nil
            }
            if let connection { return connection }
        }
        return nil
    }

    /// The next of `eventLoop`'s places in turn (any place's, when the pool has none there
    /// or the caller is not on a loop): connections are spread over the places, and a
    /// caller's command stays on its own thread when it can.
    private func nextPlace(on eventLoop: (any EventLoop)?) -> Place {
        let local = eventLoop.flatMap { placesByLoop[ObjectIdentifier($0)] } ?? places
        let turn = Int(UInt(bitPattern: cursor.add(1, ordering: .relaxed).oldValue) % UInt(Int.max))
        return local[turn % local.count]
    }

    private func anyHealthyConnection() -> RedisConnection? {
        for place in places {
            let connection: RedisConnection? = place.state.withLock { state in
                if case .connected(let connection) = state, connection.isActive { return connection }
                return nil
            }
            if let connection { return connection }
        }
        return nil
    }

    private func dial(_ place: Place, promise: EventLoopPromise<RedisConnection>, budget: Duration) {
        let configuration = self.configuration
        let logger = self.logger
        let observer = self.observer
        let onConnectionLost = self.onConnectionLost
        promise.completeWithTask {
            do {
                let connection = try await RedisConnection.connect(using: configuration, on: place.eventLoop, timeout: budget)
                let stillWanted = place.state.withLock { state in
                    if case .closed = state { return false }
                    state = .connected(connection)
                    return true
                }
                guard stillWanted else {
                    connection.close()
                    throw RedisError.poolClosed
                }
                observer?.dialed(true)
                connection.channel.closeFuture.whenComplete { _ in
                    let lost = place.state.withLock { state in
                        guard case .connected(let current) = state, current === connection else { return false }
                        state = .idle
                        return true
                    }
                    if lost { onConnectionLost() }
                }
                return connection
            } catch {
                let failure = error as? RedisError ?? .connection("\(error)")
                place.state.withLock { state in
                    if case .closed = state { return }
                    state = .failed(at: .now(), failure)
                }
                observer?.dialed(false)
                logger.debug("redis connection failed", metadata: ["error": "\(failure)"])
                throw failure
            }
        }
    }

    /// Closes every open connection (after a failover); the places redial on their next use.
    func dropConnections() {
        for place in places {
            let connection: RedisConnection? = place.state.withLock { state in
                if case .connected(let connection) = state { return connection }
                return nil
            }
            connection?.close()
        }
    }

    /// Closes every connection; later commands fail with ``RedisError/poolClosed``.
    func shutdown() {
        for place in places {
            let connection: RedisConnection? = place.state.withLock { state in
                defer { state = .closed }
                if case .connected(let connection) = state { return connection }
                return nil
            }
            connection?.close(failing: .poolClosed)
        }
    }
}

extension RedisNodePool {
    /// One place in the pool: at most one connection, and what happened to the last attempt.
    fileprivate final class Place: Sendable {
        enum State {
            case idle
            case connecting(EventLoopFuture<RedisConnection>)
            case connected(RedisConnection)
            case failed(at: NIODeadline, RedisError)
            case closed
        }

        let eventLoop: any EventLoop
        let state = Mutex(State.idle)

        init(eventLoop: any EventLoop) {
            self.eventLoop = eventLoop
        }
    }
}
