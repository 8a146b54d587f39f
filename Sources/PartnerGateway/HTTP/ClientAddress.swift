import Foundation
import HTTPTypes
import NIOCore

/// Who the client is: the socket peer, unless the peer is a trusted proxy, in which case
/// `X-Forwarded-For` is walked from the right past every trusted hop and the first
/// untrusted address is the client. A client cannot spoof its address by sending the header
/// itself: from an untrusted peer the header is ignored.
struct ClientAddress: Sendable {
    let trustedProxies: [CIDR]

    func resolve(peer: SocketAddress?, headers: HTTPFields) -> String? {
        resolve(peerIP: peer?.ipAddress, forwardedFor: headers[values: .xForwardedFor])
    }

    /// The same for a peer already formatted and the `X-Forwarded-For` values as sent.
    func resolve(peerIP: String?, forwardedFor: @autoclosure () -> [String]) -> String? {
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

    /// The `X-Forwarded-For` an upstream is sent: the peer appended to the earlier hops when
    /// the peer is a trusted proxy, else the peer alone (from anyone else, earlier hops are
    /// unverified claims an upstream must not be shown as facts).
    func forwardedFor(peer: SocketAddress?, earlierHops: @autoclosure () -> [String]) -> String? {
        forwardedFor(peerIP: peer?.ipAddress, earlierHops: earlierHops())
    }

    func forwardedFor(peerIP: String?, earlierHops: @autoclosure () -> [String]) -> String? {
        guard let peerIP else { return nil }
        guard isTrusted(peerIP) else { return peerIP }
        let earlier = earlierHops()
        return earlier.isEmpty ? peerIP : (earlier + [peerIP]).joined(separator: ", ")
    }

    private func isTrusted(_ ip: String) -> Bool {
        guard !trustedProxies.isEmpty, let bytes = CIDR.parseAddress(ip) else { return false }
        return trustedProxies.contains { $0.contains(bytes) }
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}
