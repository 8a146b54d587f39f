import GatewayPrimitives

/// What the operator granted a partner, as the bounds of its members' own changes to its keys:
/// a member may narrow a key, never widen it past its partner (scopes: ``KeyRegistry``'s
/// `requireHeld`, which binds the operator too; the number of keys: ``maxKeys``).
extension Partner {
    /// Throws ``KeyRegistryError/Code/beyondGrant`` when a key with `quota` could make more
    /// calls in a period than the partner may in one of its own, or when `allowlist` admits
    /// an address the partner's does not. No quota on the key (the partner's then applies)
    /// and an empty list (the partner's then applies) are always within.
    package func requireWithinGrant(quota: Quota?, allowlist: NetworkAllowlist?) throws {
        if let quota, let own = self.quota, quota.limit > own.limit {
            throw KeyRegistryError(
                .beyondGrant,
                "quota \(quota.limit)/\(quota.period.rawValue) is above partner \(id)'s \(own.limit)/\(own.period.rawValue): a key's quota stays within its partner's"
            )
        }
        if let allowlist, !allowedNetworks.isEmpty {
            for network in allowlist.networks where !allowedNetworks.networks.contains(where: { $0.covers(network) }) {
                throw KeyRegistryError(
                    .beyondGrant,
                    "allowed_cidrs \(network) is not inside partner \(id)'s (\(allowedNetworks.texts.joined(separator: ", "))): a key's allowlist narrows its partner's"
                )
            }
        }
    }
}

extension CIDR {
    /// Whether every address of `other` is in this network.
    func covers(_ other: CIDR) -> Bool {
        other.network.count == network.count && other.prefixLength >= prefixLength && contains(other.network)
    }
}
