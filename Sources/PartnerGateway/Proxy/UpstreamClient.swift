import AsyncHTTPClient
import NIOCore
import NIOPosix

/// The pooled keep-alive HTTP client all routes forward through.
///
/// One per process, never shut down, like AsyncHTTPClient's own `HTTPClient.shared`: it lives
/// as long as the process, and tests build many applications in one process, each of which
/// would otherwise have to shut its own client down before releasing it (a client released
/// without shutdown is a fatal error). By the time the process exits, graceful shutdown has
/// already drained every request that was using it.
enum UpstreamClient {
    static let shared: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        // A gateway passes redirects back to the client; it never follows them itself.
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.timeout = .init(connect: .seconds(2))
        // AsyncHTTPClient allows 8 connections per upstream by default; under load that
        // queues requests behind each other (64 measured +22% here, see PERFORMANCE.md).
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        return HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }()
}
