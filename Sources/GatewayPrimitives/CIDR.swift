#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 network (`10.0.0.0/8`, `::1/128`); a bare address means just that address.
///
/// Used for `trusted_proxies`: the peers whose `X-Forwarded-For` the gateway believes.
package struct CIDR: Sendable, Hashable, Decodable, CustomStringConvertible {
    /// The network address, 4 or 16 bytes.
    package let network: [UInt8]
    package let prefixLength: Int

    package init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = CIDR.parseAddress(String(parts[0])) else { return nil }
        let maximum = address.count * 8
        let length: Int
        if parts.count == 2 {
            guard let parsed = Int(parts[1]), (0...maximum).contains(parsed) else { return nil }
            length = parsed
        } else {
            length = maximum
        }
        self.network = CIDR.mask(address, to: length)
        self.prefixLength = length
    }

    /// The network of `prefixLength` bits holding `address` (4 or 16 bytes).
    package init(address: [UInt8], prefixLength: Int) {
        self.prefixLength = min(max(prefixLength, 0), address.count * 8)
        self.network = CIDR.mask(address, to: self.prefixLength)
    }

    package init(from decoder: any Decoder) throws {
        let raw = (try? decoder.singleValueContainer().decode(String.self)) ?? ""
        guard let parsed = CIDR(raw) else {
            // The configuration's loader turns this into its one-line `config error: <key>: ...`.
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\"\(raw)\" is not an IP address or CIDR range"))
        }
        self = parsed
    }

    /// Whether `address` (4 or 16 bytes) lies in this network. An IPv4-mapped IPv6 address
    /// (`::ffff:10.0.0.1`) is compared as the IPv4 address it carries.
    package func contains(_ address: [UInt8]) -> Bool {
        var candidate = address
        if network.count == 4, let mapped = CIDR.mappedIPv4(candidate) {
            candidate = mapped
        }
        guard candidate.count == network.count else { return false }
        return CIDR.mask(candidate, to: prefixLength) == network
    }

    package func contains(_ text: String) -> Bool {
        CIDR.parseAddress(text).map(contains) ?? false
    }

    package var description: String {
        "\(CIDR.format(network))/\(prefixLength)"
    }

    /// The IPv4 address an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) carries, or nil.
    package static func mappedIPv4(_ address: [UInt8]) -> [UInt8]? {
        guard address.count == 16, address.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]) else { return nil }
        return Array(address.suffix(4))
    }

    /// The bytes of an IPv4 or IPv6 address in text form, or nil.
    package static func parseAddress(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }

    package static func format(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
        inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count))
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map(UInt8.init), as: UTF8.self)
    }

    private static func mask(_ bytes: [UInt8], to length: Int) -> [UInt8] {
        var masked = bytes
        for index in masked.indices {
            let bitsHere = max(0, min(8, length - index * 8))
            masked[index] &= bitsHere == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - bitsHere))
        }
        return masked
    }
}
