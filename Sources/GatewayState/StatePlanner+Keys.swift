import Foundation
import GatewayContract

extension StatePlanner {
    /// The keys of a partner the gateway holds: each declared key matched (by id, else by
    /// name among its partner's keys that have not ended), and the partner's other keys
    /// that have not ended revoked with prune.
    func planKeys(
        of partner: DeclaredPartner, _ actual: PartnerInfo, keys: [KeyInfo], allKeys: [String: KeyInfo], partnerNames: [String: String],
        into plan: inout StatePlan
    ) {
        let matches = Matching(
            declared: partner.keys.map { ($0.id, $0.name) }, actual: keys.map { ($0.keyID, $0.name) }, candidate: { Self.isLive(keys[$0]) }
        )
        for (index, key) in partner.keys.enumerated() {
            switch matches.results[index] {
            case .found(let actualIndex):
                if let change = compared(key, keys[actualIndex], of: partner) { plan.changes.append(change) }
            case .ambiguous(let count):
                plan.changes.append(blocked(
                    .key, name: key.name, partner: partner.name, at: key.origin,
                    "\(count) keys of partner \"\(partner.name)\" are named \"\(key.name ?? "")\": give the id of the one meant"
                ))
            case .missing:
                if let id = key.id, let elsewhere = allKeys[id] {
                    plan.changes.append(blocked(
                        .key, id: id, name: key.name, partner: partner.name, at: key.origin,
                        "\(id) is a key of partner \"\(partnerNames[elsewhere.partnerID] ?? elsewhere.partnerID)\" (\(elsewhere.partnerID)): a key cannot move to another partner"
                    ))
                } else if key.status != "revoked" && !keys.contains(where: { Self.endedAsDeclared(key, $0) }) {
                    plan.changes.append(created(key, of: partner, reference: .id(actual.partnerID)))
                }
            }
        }
        for index in keys.indices where !matches.claimed.contains(index) && Self.isLive(keys[index]) {
            let key = keys[index]
            var change = StateChange(action: .remove, kind: .key, id: key.keyID, name: key.name, partner: actual.name)
            change.fields = [FieldChange("status", from: .word(key.status), to: .word("revoked"))]
            change.operation = .revokeKey(id: key.keyID, revision: key.revision)
            unnamed(change, into: &plan)
        }
    }

    /// Neither revoked nor expired.
    static func isLive(_ key: KeyInfo) -> Bool {
        key.status == "active" || key.status == "expiring"
    }

    /// Whether `actual` is the key `key` declares, expired at the expiry declared: what the file
    /// says happened, so not a change (a file exported before then stays appliable).
    static func endedAsDeclared(_ key: DeclaredKey, _ actual: KeyInfo) -> Bool {
        actual.status == "expired" && key.status != "revoked" && (key.id ?? actual.keyID) == actual.keyID && key.name == actual.name
            && actual.expiresAt != nil && seconds(key.expiresAt) == seconds(actual.expiresAt)
    }

    func created(_ key: DeclaredKey, of partner: DeclaredPartner, reference: PartnerReference) -> StateChange {
        var change = StateChange(action: .create, kind: .key, id: key.id, name: key.name, partner: partner.name)
        change.origin = key.origin
        let scopes = key.scopes ?? partner.scopes
        if let name = key.name { change.fields.append(FieldChange("name", from: .none, to: .text(name))) }
        change.fields.append(FieldChange("scopes", from: .none, to: .list(scopes)))
        if let expiry = key.expiresAt { change.fields.append(FieldChange("expires_at", from: .none, to: .time(expiry))) }
        if !key.allowedCIDRs.isEmpty { change.fields.append(FieldChange("allowed_cidrs", from: .none, to: .list(key.allowedCIDRs))) }
        if let quota = key.quota { change.fields.append(FieldChange("quota", from: .none, to: .quota(quota))) }
        if !key.meta.isEmpty { change.fields.append(FieldChange("meta", from: .none, to: .map(key.meta))) }
        if key.status == "expiring" {
            change.blocked = "a key becomes expiring only when it is rotated: declare it active, or leave it out"
        } else if let expiry = key.expiresAt, expiry <= now {
            change.blocked = "expires_at \(StateTime.text(expiry)) has passed: a new key must expire in the future"
        } else if let outside = StateRules.outside(partner, scopes: scopes, cidrs: key.allowedCIDRs) {
            change.blocked = outside
        } else {
            change.operation = .createKey(partner: reference, NewKey(
                keyID: key.id, scopes: scopes, expiresAt: key.expiresAt, name: key.name, meta: key.meta.isEmpty ? nil : key.meta,
                allowedCIDRs: key.allowedCIDRs.isEmpty ? nil : key.allowedCIDRs, quota: key.quota
            ))
        }
        return change
    }

    /// The change that makes `actual` what `key` declares, or nil when they match.
    private func compared(_ key: DeclaredKey, _ actual: KeyInfo, of partner: DeclaredPartner) -> StateChange? {
        var change = StateChange(action: .update, kind: .key, id: actual.keyID, name: actual.name, partner: partner.name)
        change.origin = key.origin
        guard Self.isLive(actual) else {
            if key.status == "revoked" || Self.endedAsDeclared(key, actual) { return nil }
            change.fields = [FieldChange("status", from: .word(actual.status), to: .word(key.status))]
            change.blocked = "\(actual.keyID) is \(actual.status), and an ended key cannot come back: remove its id to declare a new key"
            return change
        }
        if key.status == "revoked" {
            change.fields = [FieldChange("status", from: .word(actual.status), to: .word("revoked"))]
            change.operation = .revokeKey(id: actual.keyID, revision: actual.revision)
            return change
        }
        var fixed: [String] = []
        if key.status != actual.status {
            change.fields.append(FieldChange("status", from: .word(actual.status), to: .word(key.status)))
            fixed.append(actual.status == "expiring"
                ? "the key was rotated and ends at \(actual.expiresAt.map(StateTime.text) ?? "its expiry"): export again to take in its successor"
                : "a key becomes expiring only when it is rotated")
        }
        var update = (name: String?.none, meta: [String: String]?.none, cidrs: [String]?.none, quota: QuotaSetting?.none, removesQuota: false, scopes: [String]?.none)
        let scopes = key.scopes ?? partner.scopes
        if Set(scopes) != Set(actual.scopes) {
            change.fields.append(FieldChange("scopes", from: .list(actual.scopes), to: .list(scopes)))
            update.scopes = scopes
        }
        if Self.seconds(key.expiresAt) != Self.seconds(actual.expiresAt) {
            change.fields.append(FieldChange("expires_at", from: actual.expiresAt.map(StateValue.time) ?? .none, to: key.expiresAt.map(StateValue.time) ?? .none))
            fixed.append("a key's expiry is fixed when it is created")
        }
        if key.name != actual.name {
            change.fields.append(FieldChange("name", from: actual.name.map(StateValue.text) ?? .none, to: key.name.map(StateValue.text) ?? .none))
            if key.name == nil { fixed.append("the admin API cannot take a key's name away") } else { update.name = key.name }
        }
        if key.meta != actual.meta {
            change.fields.append(FieldChange("meta", from: .map(actual.meta), to: .map(key.meta)))
            update.meta = key.meta
        }
        if Set(key.allowedCIDRs) != Set(actual.allowedCIDRs) {
            change.fields.append(FieldChange("allowed_cidrs", from: .list(actual.allowedCIDRs), to: .list(key.allowedCIDRs)))
            update.cidrs = key.allowedCIDRs
        }
        if key.quota != actual.quota {
            change.fields.append(FieldChange("quota", from: actual.quota.map(StateValue.quota) ?? .none, to: key.quota.map(StateValue.quota) ?? .none))
            update.quota = key.quota
            update.removesQuota = key.quota == nil
        }
        guard !change.fields.isEmpty else { return nil }
        let outside = StateRules.outside(partner, scopes: update.scopes, cidrs: update.cidrs)
        if fixed.isEmpty && outside == nil {
            change.operation = .updateKey(
                id: actual.keyID,
                KeyUpdate(
                    allowedCIDRs: update.cidrs, quota: update.quota, removesQuota: update.removesQuota, name: update.name, meta: update.meta,
                    scopes: update.scopes
                ),
                revision: actual.revision
            )
        } else {
            change.blocked = ([fixed.isEmpty ? nil : fixed.joined(separator: "; ") + ": revoke it (status: revoked) and declare a new key without its id, or rotate it and export again"] + [outside])
                .compactMap { $0 }.joined(separator: "; ")
        }
        return change
    }

    /// Whole seconds: the admin API writes times to the second.
    static func seconds(_ date: Date?) -> Int64? {
        date.map { Int64($0.timeIntervalSince1970.rounded(.down)) }
    }
}
