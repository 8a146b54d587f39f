import Logging
import NIOCore

/// How a listener sets up a connection it accepted (``GatewayListener``): the plain HTTP/1.1
/// pipeline (``GatewayHTTP1Channel``) or TLS with HTTP/2 (``GatewayTLSChannel``).
protocol ConnectionSetup: Sendable {
    /// Adds the connection's handlers; the future completes once the channel may be registered
    /// and read. `ready` is called on the channel's event loop once its HTTP handlers are in
    /// place (over TLS: after the handshake chose a protocol).
    func setup(channel: any Channel, logger: Logger, ready: @escaping @Sendable () -> Void) -> EventLoopFuture<Void>
}
