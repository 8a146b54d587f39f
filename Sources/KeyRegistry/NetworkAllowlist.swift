import GatewayPrimitives

/// The networks a partner's or key's calls may come from (`allowed_cidrs`); empty allows every
/// address. Checked from memory on every request of a key that has one.
package struct NetworkAllowlist: Sendable, Hashable, Codable {
    package var networks: [CIDR]

    package init(_ networks: [CIDR] = []) {
        self.networks = networks
    }

    package var isEmpty: Bool { networks.isEmpty }

    /// Whether `address` (4 or 16 bytes) may call.
    package func allows(_ address: [UInt8]) -> Bool {
        networks.isEmpty || networks.contains { $0.contains(address) }
    }

    /// Whether a call from `clientIP` may use `key`: inside its partner's list and the key's
    /// (a key's list narrows its partner's). No address known means refused by any list.
    package static func admits(clientIP: String?, key: KeyRecord, partner: Partner) -> Bool {
        if key.allowedNetworks.isEmpty && partner.allowedNetworks.isEmpty { return true }
        guard let clientIP, let address = CIDR.parseAddress(clientIP) else { return false }
        return partner.allowedNetworks.allows(address) && key.allowedNetworks.allows(address)
    }

    /// The ranges as text (`10.0.0.0/8`), as the admin API shows and the registry stores them.
    package var texts: [String] { networks.map(\.description) }

    /// Parses the stored text. A range that no longer parses fails closed: a list left with
    /// nothing allows only `0.0.0.0/32`, never every address.
    init(stored: String) {
        networks = stored.split(separator: " ").compactMap { CIDR(String($0)) }
        if networks.isEmpty && !stored.isEmpty { networks = [CIDR(address: [0, 0, 0, 0], prefixLength: 32)] }
    }

    var stored: String { texts.joined(separator: " ") }

    // As its ranges' texts (a ``Partner`` is Codable).
    package init(from decoder: any Decoder) throws {
        networks = try decoder.singleValueContainer().decode([CIDR].self)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(texts)
    }
}
