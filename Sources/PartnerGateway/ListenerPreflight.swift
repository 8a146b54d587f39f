import ArgumentParser
import Logging
import NIOCore
import NIOPosix

/// Binds each listener's address once before anything else starts, so that a port already in
/// use (or an address this host does not have) stops start-up with one line naming the
/// address and the key that sets it, instead of a bare `bind(...)` error after Redis checks.
enum ListenerPreflight {
    static func check(_ config: GatewayConfig, logger: Logger) async throws {
        let listeners = [
            ("listen (GATEWAY_LISTEN)", config.listen),
            ("admin.listen (GATEWAY_ADMIN_LISTEN)", config.admin.listen),
        ]
        for (key, address) in listeners {
            do {
                let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                    .bind(host: address.host, port: address.port)
                    .get()
                try await channel.close()
            } catch {
                logger.critical("cannot listen on \(address.host):\(address.port): \(reason(error)); stop what holds it or set \(key) to a free address")
                throw ExitCode(1)
            }
        }
    }

    private static func reason(_ error: any Error) -> String {
        guard let error = error as? IOError else { return "\(error)" }
        switch error.errnoCode {
        case EADDRINUSE: return "the address is already in use"
        case EADDRNOTAVAIL: return "this host has no such address"
        case EACCES: return "permission denied (ports below 1024 need privileges)"
        default: return "\(error)"
        }
    }
}
