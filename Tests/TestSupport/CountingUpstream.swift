import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// An upstream in the test process that counts the requests it answers: each gets the status
/// its `X-Test-Status` asks for (201 without), after `X-Test-Delay-Ms` milliseconds, with the
/// body `call <n>: <request body>`, so a caller can tell which call a response came from.
public final class CountingUpstream: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let counter = NIOLockedValueBox(0)

    public var url: String { "http://127.0.0.1:\(channel.localAddress!.port!)" }
    public var calls: Int { counter.withLockedValue { $0 } }

    public init() async throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let counter = self.counter
        channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Responder(counter: counter))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
    }

    public func stop() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    private final class Responder: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let counter: NIOLockedValueBox<Int>
        var head: HTTPRequestHead?
        var body = ""

        init(counter: NIOLockedValueBox<Int>) {
            self.counter = counter
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = ""
            case .body(let chunk):
                body += String(buffer: chunk)
            case .end:
                guard let head else { return }
                self.head = nil
                let call = counter.withLockedValue { count in
                    count += 1
                    return count
                }
                let status = head.headers.first(name: "x-test-status").flatMap(Int.init) ?? 201
                let delay = head.headers.first(name: "x-test-delay-ms").flatMap(Int64.init) ?? 0
                let text = "call \(call): \(body)"
                let respond = { [context] in
                    var headers = HTTPHeaders([("Content-Type", "text/plain"), ("Content-Length", String(text.utf8.count)), ("X-Call", String(call))])
                    headers.add(name: "X-Upstream-Key", value: head.headers.first(name: "idempotency-key") ?? "")
                    context.write(self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers))), promise: nil)
                    context.write(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil)
                    context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
                }
                if delay > 0 {
                    context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(delay)) { respond() }
                } else {
                    respond()
                }
            }
        }
    }
}
