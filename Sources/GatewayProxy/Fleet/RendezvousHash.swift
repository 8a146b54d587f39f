import Foundation

/// `hash_user`: weighted rendezvous (highest random weight) hashing. Every target scores each
/// caller key; the highest score among the eligible targets wins. Removing a target moves only
/// the callers it had (everyone else's winner is unchanged), adding one takes only its share,
/// and no ring has to be rebuilt. The hash is fixed (FNV-1a, then SplitMix64), not Swift's
/// per-process seeded one, so every gateway instance sends a caller to the same target.
package enum RendezvousHash {
    /// A stable 64-bit hash of `text`'s UTF-8 bytes.
    package static func hash(_ text: some StringProtocol) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return mix(hash)
    }

    /// SplitMix64's finaliser: spreads FNV's weak low bits over the whole word.
    package static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// The target for `key` among `eligible`; `targetHashes[i]` is ``hash(_:)`` of target i's
    /// identity (its URL), `weights[i]` its weight.
    package static func pick(key: UInt64, of eligible: TargetSet, targetHashes: [UInt64], weights: [Int]) -> Int? {
        var best: Int?
        var bestScore = -Double.infinity
        for index in eligible.indices {
            // A uniform draw in (0, 1) from the pair; weight / -ln(u) makes a target's chance of
            // the highest score proportional to its weight.
            let draw = mix(key ^ targetHashes[index])
            let unit = (Double(draw >> 11) + 0.5) / Double(UInt64(1) << 53)
            let score = Double(weights[index]) / -log(unit)
            if score > bestScore {
                bestScore = score
                best = index
            }
        }
        return best
    }
}
