import AsyncHTTPClient
import NIOCore
import NIOPosix

/// The HTTP client for the SMS webhook (`otp.mode: sms`). Proxied routes do not use it: they
/// forward over ``UpstreamPool``'s connections, which cost a fraction of the CPU per request.
///
/// One per process, never shut down, like AsyncHTTPClient's own `HTTPClient.shared`: it lives
/// as long as the process, and tests build many applications in one process, each of which
/// would otherwise have to shut its own client down before releasing it (a client released
/// without shutdown is a fatal error). By the time the process exits, graceful shutdown has
/// already drained every request that was using it.
package enum WebhookClient {
    package static let shared: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.timeout = .init(connect: .seconds(2))
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        return HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }()
}
