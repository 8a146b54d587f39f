import NIOCore
import NIOPosix

/// One active health check: `GET path` on a new connection to a target (through its TLS
/// settings for `https://`), passed when a `2xx` status line arrives within the timeout. A new
/// connection each time, not a pooled one: the check must see whether the target accepts
/// connections, and must never hold one a request could use.
package enum UpstreamHealthProbe {
    package enum Result: Sendable, Equatable {
        case passed
        /// The connection was refused or dropped before a status line.
        case refused
        case timeout
        /// Answered, but not `2xx`.
        case status(Int)

        /// The `kind` label of `gateway_upstream_health_check_failures_total`.
        package var kind: String {
            switch self {
            case .passed: "passed"
            case .refused: "refused"
            case .timeout: "timeout"
            case .status: "status"
            }
        }
    }

    package static func check(_ target: UpstreamTarget, path: String, timeout: TimeAmount, on loop: any EventLoop) -> EventLoopFuture<Result> {
        let promise = loop.makePromise(of: Result.self)
        let pool = target.pool
        let request = "GET \(path) HTTP/1.1\r\nHost: \(target.authority)\r\nUser-Agent: partner-gateway-health-check\r\nConnection: close\r\n\r\n"
        let deadline = loop.scheduleTask(in: timeout) { promise.fail(CheckTimedOut()) }
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls = pool.tls { _ = try tls.addHandlers(to: channel, timeout: timeout) }
                    try channel.pipeline.syncOperations.addHandler(StatusLineHandler(promise: promise, request: request))
                }
            }
        let connected: EventLoopFuture<any Channel>
        if let address = try? SocketAddress(ipAddress: pool.host, port: pool.port) {
            connected = bootstrap.connect(to: address)
        } else {
            connected = bootstrap.connect(host: pool.host, port: pool.port)
        }
        connected.whenComplete { result in
            switch result {
            case .success(let channel):
                promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
            case .failure:
                promise.succeed(.refused)
            }
        }
        return promise.futureResult.always { _ in deadline.cancel() }.flatMapErrorThrowing { error in
            if error is CheckTimedOut { return .timeout }
            return .refused
        }
    }

    private struct CheckTimedOut: Error {}

    /// Sends the request once active, then reads up to the status line.
    private final class StatusLineHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        private let promise: EventLoopPromise<Result>
        private let request: String
        private var received: [UInt8] = []

        init(promise: EventLoopPromise<Result>, request: String) {
            self.promise = promise
            self.request = request
        }

        func channelActive(context: ChannelHandlerContext) {
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: request)), promise: nil)
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            received += buffer.readBytes(length: min(buffer.readableBytes, 64 - received.count)) ?? []
            // `HTTP/1.1 200` is 12 bytes; the status is all a check needs.
            guard received.count >= 12 else { return }
            let line = String(decoding: received, as: UTF8.self)
            guard line.hasPrefix("HTTP/1."), let status = Int(line.dropFirst(9).prefix(3)) else {
                promise.succeed(.status(0))
                return
            }
            promise.succeed((200..<300).contains(status) ? .passed : .status(status))
        }

        func channelInactive(context: ChannelHandlerContext) {
            promise.succeed(.refused)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            promise.succeed(.refused)
            context.close(promise: nil)
        }
    }
}
