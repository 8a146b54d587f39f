import Foundation
import GatewayConfiguration
import GatewayPrimitives
import HTTPTypes
import NIOCore

/// Who the client is: the socket peer, unless the peer is a trusted proxy, in which case
/// `X-Forwarded-For` is walked from the right past every trusted hop and the first
/// untrusted address is the client. A client cannot spoof its address by sending the header
/// itself: from an untrusted peer the header is ignored.
package struct ClientAddress: Sendable {
    package let trustedProxies: [CIDR]

    package init(trustedProxies: [CIDR]) {
        self.trustedProxies = trustedProxies
    }

    package func resolve(peer: SocketAddress?, headers: HTTPFields) -> String? {
        resolve(peerIP: peer?.ipAddress, forwardedFor: headers[values: .xForwardedFor])
    }

    /// ``resolve(peer:headers:)`` from the peer's address as text and the `X-Forwarded-For`
    /// values, for the proxy engine, which reads NIO's headers.
    package func resolve(peerIP: String?, forwardedFor: @autoclosure () -> [String]) -> String? {
        guard let peerIP else { return nil }
        guard isTrusted(peerIP) else { return peerIP }
        var hops: [String] = []
        for value in forwardedFor() {
            hops.append(contentsOf: value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        }
        for hop in hops.reversed() {
            guard CIDR.parseAddress(hop) != nil else { return peerIP }
            if !isTrusted(hop) { return hop }
        }
        return hops.first ?? peerIP
    }

    /// What an upstream is told about where a request came from (``ForwardedHeaders``).
    package struct Forwarding {
        /// `X-Forwarded-For`: the peer appended to the earlier hops when the peer is a trusted
        /// proxy, else the peer alone (from anyone else, earlier hops are unverified claims an
        /// upstream must not be shown as facts).
        package let forwardedFor: String?
        /// The peer is one of `trusted_proxies`: the `Forwarded` and `X-Real-IP` it sent are
        /// its own word and pass on. From anyone else they are dropped, and `X-Real-IP` is
        /// the peer's address.
        package let fromTrustedProxy: Bool
        package let peerIP: String?
    }

    package func forwarding(peer: SocketAddress?, earlierHops: @autoclosure () -> [String]) -> Forwarding {
        forwarding(peerIP: peer?.ipAddress, earlierHops: earlierHops())
    }

    package func forwarding(peerIP: String?, earlierHops: @autoclosure () -> [String]) -> Forwarding {
        guard let peerIP else { return Forwarding(forwardedFor: nil, fromTrustedProxy: false, peerIP: nil) }
        guard isTrusted(peerIP) else { return Forwarding(forwardedFor: peerIP, fromTrustedProxy: false, peerIP: peerIP) }
        let earlier = earlierHops()
        let forwardedFor = earlier.isEmpty ? peerIP : (earlier + [peerIP]).joined(separator: ", ")
        return Forwarding(forwardedFor: forwardedFor, fromTrustedProxy: true, peerIP: peerIP)
    }

    private func isTrusted(_ ip: String) -> Bool {
        guard !trustedProxies.isEmpty, let bytes = CIDR.parseAddress(ip) else { return false }
        return trustedProxies.contains { $0.contains(bytes) }
    }
}

extension HTTPField.Name {
    package static let xForwardedFor = HTTPField.Name(HeaderName.forwardedFor.name)!
}
