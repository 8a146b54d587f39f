import ArgumentParser
import Foundation
import GatewayConfiguration
import Glibc
import Logging
import NIOCore

/// Binds each listener's address once before anything else starts, so that a port already in
/// use (or an address this host does not have) stops start-up with one line naming the
/// address and the key that sets it, instead of a bare `bind(...)` error after Redis checks.
///
/// The probe binds without listening and closes at once: nothing can connect to it, so a
/// client (or a test) waiting for the port to accept only ever reaches the real listener.
enum ListenerPreflight {
    static func check(_ config: GatewayConfig, logger: Logger) throws {
        let listeners = [
            ("listen (GATEWAY_LISTEN)", config.listen),
            ("admin.listen (GATEWAY_ADMIN_LISTEN)", config.admin.listen),
        ] + (config.authz.listen.map { [("authz.listen (GATEWAY_AUTHZ_LISTEN)", $0)] } ?? [])
        for (key, address) in listeners {
            if let problem = bindProblem(host: address.host, port: address.port) {
                logger.critical("cannot listen on \(address.host):\(address.port): \(problem); stop what holds it or set \(key) to a free address")
                throw ExitCode(1)
            }
        }
    }

    /// Why `host:port` cannot be bound, or nil when it can.
    private static func bindProblem(host: String, port: Int) -> String? {
        let address: SocketAddress
        do {
            address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        } catch {
            return "\(host) does not resolve to an address"
        }
        let family = address.protocol.rawValue
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }  // Cannot probe: let the listener try.
        defer { close(descriptor) }
        var on: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        let result = address.withSockAddr { pointer, size in Foundation.bind(descriptor, pointer, socklen_t(size)) }
        guard result != 0 else { return nil }
        switch errno {
        case EADDRINUSE: return "the address is already in use"
        case EADDRNOTAVAIL: return "this host has no such address"
        case EACCES: return "permission denied (ports below 1024 need privileges)"
        case let code: return String(cString: strerror(code))
        }
    }
}
