import ArgumentParser
import NIOCore
import NIOHTTP1
import NIOPosix

/// The least a reverse proxy on SwiftNIO costs: one upstream connection per client connection,
/// messages passed on as they arrive and flushed at the end of the loop's pass (the gateway's
/// `PassFlushes`), and nothing else (no routes, authentication, header rules, limits, metrics
/// or log). Two ways to read heads: NIO's HTTP/1 codec on both sides (`--heads codec`), or
/// none, each head found in the read buffer by offsets and passed on as a slice of it
/// (`--heads bytes`). `benchmarks/proxy-floor.sh` runs both beside nginx and the gateway, to
/// tell what the stack costs from what the gateway adds.
@main
struct ProxyFloor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxy-floor",
        abstract: "A bare SwiftNIO reverse proxy, the floor under the gateway's proxying."
    )

    @Option(help: "Port to listen on, on 127.0.0.1.")
    var port: Int

    @Option(help: "Port of the upstream, on 127.0.0.1.")
    var upstreamPort: Int

    @Option(help: "Event loops (default: one per core, as the gateway).")
    var loops: Int = System.coreCount

    enum Heads: String, ExpressibleByArgument {
        case codec, bytes
    }

    @Option(help: "How heads are read: NIO's HTTP/1 codec, or scanned as bytes.")
    var heads: Heads = .codec

    func run() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, loops))
        let upstream = try SocketAddress(ipAddress: "127.0.0.1", port: upstreamPort)
        let server = try ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    switch heads {
                    case .codec:
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false)
                        try channel.pipeline.syncOperations.addHandler(CodecFloorClientHandler(upstream: upstream))
                    case .bytes:
                        try channel.pipeline.syncOperations.addHandler(ByteFloorClientHandler(upstream: upstream))
                    }
                }
            }
            .bind(host: "127.0.0.1", port: port)
            .wait()
        print("proxy-floor listening on 127.0.0.1:\(port), \(loops) event loops, heads: \(heads.rawValue)")
        try server.closeFuture.wait()
    }
}
