import NIOCore

/// An upgraded WebSocket connection: the client's connection and the upstream's, joined on
/// their one event loop after the upstream answered the handshake `101`. Bytes flow both ways
/// as they are read, with back-pressure (a side is read only while the other can take
/// more); what the gateway does itself (its close frames, `stream_idle_timeout`) is decided by
/// ``StateMachine`` and ``StreamIdleDeadline``, and performed here.
package final class WebSocketTunnel {
    /// Close codes the gateway sends (RFC 6455 §7.4.1).
    package enum CloseCode {
        /// Shutdown or silence for `stream_idle_timeout`.
        package static let goingAway: UInt16 = 1001
        /// The credential the connection was opened with ended.
        package static let policyViolation: UInt16 = 1008
    }

    /// How long the two sides have, once the gateway's close frames are out, to answer them
    /// and close before their connections are closed anyway.
    package static let closeGrace = TimeAmount.seconds(2)

    package let eventLoop: any EventLoop
    package let client: WebSocketTunnelHandler
    package let upstream: WebSocketTunnelHandler
    private var machine = StateMachine()
    private var idle: StreamIdleDeadline
    private var idleTimer: Scheduled<Void>?
    private var graceTimer: Scheduled<Void>?
    /// Why the tunnel closed (the metrics' reason): the gateway's reason, or the side that
    /// closed first.
    package private(set) var endReason = "client"
    private var reasonSet = false
    /// Told once, when both connections are closing.
    package var onEnd: (() -> Void)?

    package init(eventLoop: any EventLoop, idleTimeout: TimeAmount, onEnd: (() -> Void)? = nil) {
        self.eventLoop = eventLoop
        idle = StreamIdleDeadline(timeout: idleTimeout, now: eventLoop.now)
        client = WebSocketTunnelHandler(side: .client)
        upstream = WebSocketTunnelHandler(side: .upstream)
        self.onEnd = onEnd
        client.tunnel = self
        upstream.tunnel = self
    }

    private func handler(_ side: Side) -> WebSocketTunnelHandler {
        side == .client ? client : upstream
    }

    /// Both handlers are in their pipelines: start reading both sides and timing silence.
    package func start() {
        guard client.isActive, upstream.isActive else {
            end()
            return
        }
        armIdleTimer(at: idle.firstDeadline)
        client.read()
        upstream.read()
    }

    // MARK: From the handlers

    func read(_ bytes: ByteBuffer, from side: Side) {
        idle.activity(at: eventLoop.now)
        let forward = bytes.withUnsafeReadableBytes { machine.read(from: side, $0) }
        let other = handler(side.other)
        if forward.count == bytes.readableBytes {
            other.write(bytes)
        } else if forward.count > 0, let part = bytes.getSlice(at: bytes.readerIndex, length: forward.count) {
            other.write(part)
        }
        if let code = forward.thenClose {
            sendClose(code, to: side.other)
        }
    }

    func readComplete(from side: Side) {
        let other = handler(side.other)
        other.flush()
        if other.isWritable { handler(side).read() } else { handler(side).holdRead() }
    }

    func writabilityChanged(of side: Side) {
        if handler(side).isWritable { handler(side.other).releaseHeldRead() }
    }

    func inactive(_ side: Side) {
        setReason(side == .client ? "client" : "upstream")
        end()
    }

    private func setReason(_ reason: String) {
        guard !reasonSet else { return }
        reasonSet = true
        endReason = reason
    }

    // MARK: Closing

    /// Closes both sides with `code` in a close frame each, between frames (``StateMachine``);
    /// `reason` is the metrics'.
    package func close(code: UInt16, reason: String) {
        guard !machine.hasEnded else { return }
        setReason(reason)
        for side in machine.close(code: code) {
            sendClose(code, to: side)
        }
        if graceTimer == nil {
            graceTimer = eventLoop.scheduleTask(in: Self.closeGrace) { self.end() }
        }
    }

    private func sendClose(_ code: UInt16, to side: Side) {
        let target = handler(side)
        target.write(Self.closeFrame(code: code, masked: side == .upstream, allocator: target.allocator))
        target.flush()
    }

    /// Both connections close, after what was written to them; the client's lingering, so its
    /// answer to a close frame meets no reset.
    private func end() {
        switch machine.end() {
        case .closeConnections: break
        case .none: return
        }
        idleTimer?.cancel()
        graceTimer?.cancel()
        client.closeAfterWrites(lingering: Self.closeGrace)
        upstream.closeAfterWrites()
        client.tunnel = nil
        upstream.tunnel = nil
        onEnd?()
        onEnd = nil
    }

    private func armIdleTimer(at deadline: NIODeadline) {
        idleTimer = eventLoop.scheduleTask(deadline: deadline) { self.idleDeadlinePassed() }
    }

    private func idleDeadlinePassed() {
        guard !machine.hasEnded else { return }
        switch idle.deadlinePassed(now: eventLoop.now) {
        case .expired: close(code: CloseCode.goingAway, reason: "idle")
        case .later(let deadline): armIdleTimer(at: deadline)
        }
    }

    /// A close frame with `code` (RFC 6455 §5.5.1): masked, with a fresh key, toward the
    /// upstream (the gateway is its client there), plain toward the client.
    package static func closeFrame(code: UInt16, masked: Bool, allocator: ByteBufferAllocator) -> ByteBuffer {
        var frame = allocator.buffer(capacity: 8)
        frame.writeInteger(UInt8(0x88))
        let high = UInt8(code >> 8)
        let low = UInt8(code & 0xFF)
        guard masked else {
            frame.writeInteger(UInt8(2))
            frame.writeInteger(high)
            frame.writeInteger(low)
            return frame
        }
        frame.writeInteger(UInt8(0x80 | 2))
        let key = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame.writeBytes(key)
        frame.writeInteger(high ^ key[0])
        frame.writeInteger(low ^ key[1])
        return frame
    }
}
