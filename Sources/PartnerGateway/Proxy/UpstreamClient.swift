import AsyncHTTPClient
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The pooled keep-alive HTTP client all routes forward through, shut down after the public
/// listener has drained.
struct UpstreamClient: Service {
    let client: HTTPClient

    init() {
        var configuration = HTTPClient.Configuration()
        // A gateway passes redirects back to the client; it never follows them itself.
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.timeout = .init(connect: .seconds(2))
        // AsyncHTTPClient allows 8 connections per upstream by default; under load that
        // queues requests behind each other (64 measured +22% here, see PERFORMANCE.md).
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }

    func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }
}
