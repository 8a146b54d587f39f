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

    enum HTTP2Streams: String, ExpressibleByArgument {
        case frames, multiplexer
    }

    @Option(help: "With TLS: HTTP/2 streams read as frames by one handler, or through NIO's multiplexer.")
    var http2: HTTP2Streams = .frames

    @Option(help: "A PEM certificate: serve TLS (ALPN h2, then http/1.1) with it.")
    var tlsCert: String?

    @Option(help: "The certificate's PEM private key.")
    var tlsKey: String?

    func run() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, loops))
        let upstream = try SocketAddress(ipAddress: "127.0.0.1", port: upstreamPort)
        var pools: [ObjectIdentifier: FloorUpstreamPool] = [:]
        for loop in group.makeIterator() {
            pools[ObjectIdentifier(loop)] = FloorUpstreamPool(loop: loop, address: upstream)
        }
        let http1 = HTTP1Setup(heads: heads, upstream: upstream)
        let http2 = HTTP2Setup(streams: self.http2, pools: pools)
        let tls = try tlsCert.map { try FloorTLS.context(certificate: $0, key: tlsKey ?? "") }
        let server = try ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                guard let tls else {
                    return channel.eventLoop.makeCompletedFuture { try http1.configure(channel) }
                }
                return FloorTLS.configure(channel, context: tls, http1: http1, http2: http2)
            }
            .bind(host: "127.0.0.1", port: port)
            .wait()
        print("proxy-floor listening on 127.0.0.1:\(port), \(loops) event loops, heads: \(heads.rawValue)"
            + (tls == nil ? "" : ", TLS, HTTP/2 streams: \(self.http2.rawValue)"))
        try server.closeFuture.wait()
    }
}
