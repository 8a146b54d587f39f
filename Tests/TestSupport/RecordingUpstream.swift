import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// An upstream in the test process that records every request it parses, exactly as its
/// parser (NIO's, llhttp) framed it: method, target, fields and body bytes. Each request is
/// answered `200` with the `X-Request-Id` it carried as the body, so a client can tell whether
/// the response it got was meant for it (a smuggled request shifts answers between callers).
public final class RecordingUpstream: Sendable {
    public struct Recorded: Sendable {
        public let method: String
        public let target: String
        public let fields: [(name: String, value: String)]
        public let body: [UInt8]

        public func values(_ name: String) -> [String] {
            fields.filter { $0.name.lowercased() == name }.map(\.value)
        }
    }

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let state = NIOLockedValueBox<(requests: [Recorded], parseErrors: [String])>(([], []))

    public var port: Int { channel.localAddress!.port! }
    public var url: String { "http://127.0.0.1:\(port)" }
    public var requests: [Recorded] { state.withLockedValue { $0.requests } }
    public var parseErrors: [String] { state.withLockedValue { $0.parseErrors } }

    public init() async throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let state = self.state
        channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .fireError)))
                    try channel.pipeline.syncOperations.addHandler(Recorder(state: state))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
    }

    public func stop() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    private final class Recorder: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = ByteBuffer

        let state: NIOLockedValueBox<(requests: [Recorded], parseErrors: [String])>
        var head: HTTPRequestHead?
        var body: [UInt8] = []

        init(state: NIOLockedValueBox<(requests: [Recorded], parseErrors: [String])>) {
            self.state = state
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = []
            case .body(var chunk):
                body += chunk.readBytes(length: chunk.readableBytes) ?? []
            case .end:
                guard let head else { return }
                let recorded = Recorded(
                    method: head.method.rawValue, target: head.uri, fields: head.headers.map { ($0.name, $0.value) }, body: body
                )
                state.withLockedValue { $0.requests.append(recorded) }
                let id = head.headers.first(name: "x-request-id") ?? ""
                var answer = context.channel.allocator.buffer(capacity: 96)
                answer.writeString("HTTP/1.1 200 OK\r\nContent-Length: \(id.utf8.count)\r\nContent-Type: text/plain\r\n\r\n")
                // A HEAD answer has the length of the answer a GET would get, and no body.
                if head.method != .HEAD { answer.writeString(id) }
                context.writeAndFlush(wrapOutboundOut(answer), promise: nil)
                self.head = nil
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            state.withLockedValue { $0.parseErrors.append("\(error)") }
            context.close(promise: nil)
        }
    }
}

/// A Redis, a ``RecordingUpstream`` and a gateway whose routes all lead to that upstream.
public struct RecordedGateway: Sendable {
    public let redis: RedisServer
    public let upstream: RecordingUpstream
    public let gateway: GatewayProcess

    /// `routes`: each route's name, path prefix and `auth`.
    public init(routes: [(name: String, prefix: String, auth: String)]) async throws {
        let redis = try await RedisServer()
        let upstream = try await RecordingUpstream()
        let table = routes.map { "  - {name: \($0.name), path_prefix: \($0.prefix), upstream: \(upstream.url), auth: \($0.auth)}" }
        do {
            gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis) + "routes:\n" + table.joined(separator: "\n") + "\n")
        } catch {
            upstream.stop()
            redis.kill()
            throw error
        }
        self.redis = redis
        self.upstream = upstream
    }

    /// Stops all three at once, so it can run in a `defer`: a stop left to a task could be
    /// cut short by the test process exiting, and leave Redis running.
    public func stop() {
        gateway.kill()
        upstream.stop()
        redis.kill()
    }
}
