import Foundation
import NIOCore
import NIOPosix

/// The IP addresses each upstream host name resolved to when last looked up. A target named by
/// a host name becomes one target per address (``ProxyRoute``), each connected to directly
/// with the name as its `Host` and TLS server name, as Envoy's `STRICT_DNS` clusters do.
package struct UpstreamAddresses: Sendable, Equatable {
    /// Host name → its addresses, sorted, so one answer in another order is no change.
    package private(set) var byHost: [String: [String]] = [:]

    package init(_ byHost: [String: [String]] = [:]) {
        self.byHost = byHost.mapValues { Array(Set($0)).sorted() }
    }

    package func addresses(of host: String) -> [String]? {
        byHost[host.lowercased()]
    }

    /// Whether `host` is an IP address literal, which needs no lookup.
    package static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: 0)) != nil
    }

    /// `hosts` looked up again, off the event loops: a name that does not resolve keeps the
    /// addresses it had (a DNS outage does not empty a fleet), and is absent if it never had any.
    package func refreshed(_ hosts: Set<String>, lookUp: @escaping @Sendable (String) -> [String] = Self.lookUp) async -> UpstreamAddresses {
        var next: [String: [String]] = [:]
        for host in hosts.map({ $0.lowercased() }) {
            let found = (try? await NIOThreadPool.singleton.runIfActive { lookUp(host) }) ?? []
            if !found.isEmpty {
                next[host] = found
            } else if let known = byHost[host] {
                next[host] = known
            }
        }
        return UpstreamAddresses(next)
    }

    /// Every IPv4 and IPv6 address of `host` (`getaddrinfo` through Foundation's `Host`); blocks.
    package static func lookUp(_ host: String) -> [String] {
        Host(name: host).addresses.filter { isIPAddress($0) }
    }
}
