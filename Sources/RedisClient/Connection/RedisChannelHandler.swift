import NIOCore

/// Writes pipelined commands and matches the replies hiredis parses to their waiters, in order.
///
/// Lives on its channel's event loop: every method runs there. A reply that cannot be matched,
/// a parse error or a missed deadline poisons the connection (a pipelined connection cannot skip a
/// reply), so every waiter fails and the channel closes; the pool opens a fresh one.
final class RedisChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let reader = HiredisReplyReader()
    private var inFlight = CircularBuffer<RedisPendingRequest>(initialCapacity: 64)
    /// Replies gathered so far for the multi-command request at the head of `inFlight`.
    private var gathered: [RedisValue] = []
    private var context: ChannelHandlerContext?
    /// Set once the connection is unusable; later submissions fail with it at once.
    private var failure: RedisError?
    /// One timer, armed for the deadline of the oldest command in flight. When it fires it
    /// either fails the connection (that command is overdue) or re-arms for the new oldest one,
    /// so a busy connection sets about one timer per timeout period, not one per command.
    private var deadlineTimer: Scheduled<Void>?
    /// Set on subscriber connections: replies nobody waits for (pub/sub messages) go here.
    private let onPush: (@Sendable (RedisValue) -> Void)?
    /// A flush of what ``submitOnLoop(_:)`` wrote is due (at the end of this loop tick, or
    /// once ``flushInterval`` has passed since the last one).
    private var flushScheduled = false
    /// The least time between two flushes of ``submitOnLoop(_:)``'s writes
    /// (``RedisConfiguration/flushInterval``).
    private let flushInterval: TimeAmount
    private var lastFlush: NIODeadline?

    init(flushInterval: Duration = .zero, onPush: (@Sendable (RedisValue) -> Void)? = nil) {
        self.flushInterval = TimeAmount(flushInterval)
        self.onPush = onPush
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        poison(.connection("connection closed"), close: false)
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        poison(.connection("connection closed by peer"), close: false)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        poison(RedisTLS.isTLSError(error) ? .tls(RedisTLS.describe(error)) : .connection("\(error)"), close: true)
    }

    /// Fails every command still owed a reply with `error`, then closes: a close this side
    /// chose (the pool shutting down) must not read as Redis hanging up.
    func close(failing error: RedisError) {
        poison(error, close: true)
    }

    /// Writes `requests` and flushes once: commands that arrive together share one syscall.
    func submit(_ requests: [RedisPendingRequest]) {
        guard let context, failure == nil else {
            let error = failure ?? .connection("connection closed")
            for request in requests { request.fail(error) }
            return
        }
        // One buffer for the whole batch: one write, and over TLS one record (and one
        // encryption call) instead of one per command.
        if requests.count == 1 {
            inFlight.append(requests[0])
            context.write(wrapOutboundOut(requests[0].payload), promise: nil)
        } else {
            var batch = context.channel.allocator.buffer(capacity: requests.reduce(0) { $0 + $1.payload.readableBytes })
            for request in requests {
                inFlight.append(request)
                var payload = request.payload
                batch.writeBuffer(&payload)
            }
            context.write(wrapOutboundOut(batch), promise: nil)
        }
        flush(context)
        armDeadlineTimer()
    }

    /// Writes a request of a caller on this loop without flushing: the flush waits until the
    /// loop has handled everything that woke it, so the commands of every request read in one
    /// tick (one per client connection) leave in one write, as the outbox's drain does for
    /// callers on other threads, without its lock and hop. With a ``flushInterval``, when the
    /// last flush was less than that ago, it waits until that has passed: the commands of the
    /// ticks in between join it, and each write (which wakes Redis) and each read of replies
    /// carries more of them.
    func submitOnLoop(_ request: RedisPendingRequest) {
        guard let context, failure == nil else {
            request.fail(failure ?? .connection("connection closed"))
            return
        }
        inFlight.append(request)
        context.write(wrapOutboundOut(request.payload), promise: nil)
        armDeadlineTimer()
        guard !flushScheduled else { return }
        flushScheduled = true
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        if flushInterval > .zero, let lastFlush, context.eventLoop.now < lastFlush + flushInterval {
            context.eventLoop.scheduleTask(deadline: lastFlush + flushInterval) { bound.value.scheduledFlush() }
        } else {
            context.eventLoop.execute { bound.value.scheduledFlush() }
        }
    }

    private func scheduledFlush() {
        flushScheduled = false
        guard let context else { return }
        flush(context)
    }

    /// Every flush, noted for the interval.
    private func flush(_ context: ChannelHandlerContext) {
        if flushInterval > .zero { lastFlush = context.eventLoop.now }
        context.flush()
    }

    private func armDeadlineTimer() {
        guard deadlineTimer == nil, let head = inFlight.first, let context else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        deadlineTimer = context.eventLoop.scheduleTask(deadline: head.deadline) {
            bound.value.deadlineTimerFired()
        }
    }

    private func deadlineTimerFired() {
        deadlineTimer = nil
        guard let head = inFlight.first else { return }
        if head.deadline <= .now() {
            poison(.timeout("no reply within the command timeout"), close: true)
        } else {
            armDeadlineTimer()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        do {
            try buffer.withUnsafeReadableBytes { bytes throws(RedisError) in try reader.feed(bytes) }
            while let value = try reader.next() {
                try deliver(value)
            }
        } catch {
            poison(error, close: true)
        }
    }

    private func deliver(_ value: RedisValue) throws(RedisError) {
        guard !inFlight.isEmpty else {
            guard let onPush else { throw .protocolViolation("reply with no command waiting for it") }
            onPush(value)
            return
        }
        // The head is read in place and removed once: a copy of it costs retains.
        let replyCount = inFlight[inFlight.startIndex].replyCount
        guard replyCount > 1 else {
            inFlight.removeFirst().succeed(value)
            return
        }
        gathered.append(value)
        guard gathered.count == replyCount else { return }
        let head = inFlight.removeFirst()
        let replies = gathered
        gathered = []
        head.succeed(replies)
    }

    private func poison(_ error: RedisError, close: Bool) {
        if failure == nil { failure = error }
        deadlineTimer?.cancel()
        deadlineTimer = nil
        gathered = []
        while let request = inFlight.popFirst() {
            request.fail(error)
        }
        if close, let context {
            context.close(promise: nil)
        }
    }
}
