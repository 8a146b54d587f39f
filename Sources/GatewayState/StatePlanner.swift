import Foundation
import GatewayContract

/// Compares the files with the gateway and plans the fewest admin API calls that make the
/// gateway match them: one call per resource that differs, none for one that does not.
///
/// Matching: an entry with an id is that resource; one without is the resource of its kind
/// (a key: of its partner) with its name that has not ended (a member: of its partner, with
/// its email). A change the admin API cannot
/// make (a key's expiry, which is fixed when it is created; an ended key back) is in the plan,
/// blocked with the reason, and an apply refuses the plan while one is. A key or credential
/// that expired at the expiry its entry gives is no change: the file says what happened.
public struct StatePlanner: Sendable {
    /// Whether what the files do not name is removed (keys and credentials revoked, members
    /// removed, partners disabled), or kept and listed.
    public var prune: Bool
    public var now: Date
    /// `start` of the credential applying the plan (`pga_live_` and 4 more characters): never
    /// pruned.
    public var applyingCredentialStart: String?

    public init(prune: Bool, now: Date = Date(), applyingCredentialStart: String? = nil) {
        self.prune = prune
        self.now = now
        self.applyingCredentialStart = applyingCredentialStart
    }

    public func plan(_ document: StateDocument, against snapshot: GatewaySnapshot) -> StatePlan {
        var plan = StatePlan()
        if let partners = document.partners { planPartners(partners, snapshot, into: &plan) }
        if let admins = document.admins { planAdmins(admins, snapshot.admins ?? [], into: &plan) }
        return plan
    }

    /// A change of a declared resource the admin API cannot make, and why.
    func blocked(_ kind: StateChange.Kind, id: String? = nil, name: String?, partner: String? = nil, at origin: StateOrigin, _ reason: String) -> StateChange {
        var change = StateChange(action: .update, kind: kind, id: id, name: name, partner: partner)
        change.origin = origin
        change.blocked = reason
        return change
    }

    /// Removals go to the plan with prune, else to what is kept.
    func unnamed(_ change: StateChange, into plan: inout StatePlan) {
        if prune { plan.changes.append(change) } else { plan.kept.append(change) }
    }

    // MARK: Partners

    private func planPartners(_ declared: [DeclaredPartner], _ snapshot: GatewaySnapshot, into plan: inout StatePlan) {
        let matches = Matching(declared: declared.map { ($0.id, $0.name) }, actual: snapshot.partners.map { ($0.partnerID, $0.name) })
        let allKeys = Dictionary(snapshot.keys.values.joined().map { ($0.keyID, $0) }, uniquingKeysWith: { first, _ in first })
        let everyone = MemberIndex(snapshot.members.values.joined())
        let partnerNames = Dictionary(snapshot.partners.map { ($0.partnerID, $0.name) }, uniquingKeysWith: { first, _ in first })
        for (index, partner) in declared.enumerated() {
            switch matches.results[index] {
            case .ambiguous(let count):
                plan.changes.append(blocked(
                    .partner, name: partner.name, at: partner.origin, "\(count) partners in the gateway are named \"\(partner.name)\": give the id of the one meant"
                ))
            case .missing:
                plan.changes.append(created(partner))
                let reference = partner.id.map(PartnerReference.id) ?? .created(name: partner.name)
                for key in partner.keys where key.status != "revoked" {
                    plan.changes.append(created(key, of: partner, reference: reference))
                }
                for member in partner.members {
                    plan.changes.append(created(member, of: partner, reference: reference, everyone: everyone, partnerNames: partnerNames))
                }
            case .found(let actualIndex):
                let actual = snapshot.partners[actualIndex]
                if let change = compared(partner, actual) { plan.changes.append(change) }
                planKeys(of: partner, actual, keys: snapshot.keys[actual.partnerID] ?? [], allKeys: allKeys, partnerNames: partnerNames, into: &plan)
                planMembers(of: partner, actual, members: snapshot.members[actual.partnerID] ?? [], everyone: everyone, partnerNames: partnerNames, into: &plan)
            }
        }
        for actual in snapshot.partners.indices where !matches.claimed.contains(actual) && snapshot.partners[actual].status == "active" {
            let partner = snapshot.partners[actual]
            var change = StateChange(action: .remove, kind: .partner, id: partner.partnerID, name: partner.name)
            change.fields = [FieldChange("status", from: .word("active"), to: .word("disabled"))]
            change.operation = .updatePartner(id: partner.partnerID, PartnerUpdate(status: "disabled"), revision: partner.revision)
            unnamed(change, into: &plan)
        }
    }

    private func created(_ partner: DeclaredPartner) -> StateChange {
        var change = StateChange(action: .create, kind: .partner, id: partner.id, name: partner.name)
        change.origin = partner.origin
        change.fields = [
            FieldChange("name", from: .none, to: .text(partner.name)),
            FieldChange("status", from: .none, to: .word(partner.status)),
            FieldChange("rate", from: .none, to: .number(partner.rate)),
            FieldChange("burst", from: .none, to: .number(Double(partner.burst))),
            FieldChange("scopes", from: .none, to: .list(partner.scopes)),
        ]
        if !partner.allowedCIDRs.isEmpty { change.fields.append(FieldChange("allowed_cidrs", from: .none, to: .list(partner.allowedCIDRs))) }
        if let quota = partner.quota { change.fields.append(FieldChange("quota", from: .none, to: .quota(quota))) }
        change.fields.append(FieldChange("max_keys", from: .none, to: .number(Double(partner.maxKeys))))
        change.operation = .createPartner(NewPartner(
            partnerID: partner.id, name: partner.name, rate: partner.rate, burst: partner.burst, scopes: partner.scopes,
            allowedCIDRs: partner.allowedCIDRs, quota: partner.quota, status: partner.status, maxKeys: partner.maxKeys
        ))
        return change
    }

    /// The update that makes `actual` what `partner` declares, or nil when they match.
    private func compared(_ partner: DeclaredPartner, _ actual: PartnerInfo) -> StateChange? {
        var fields: [FieldChange] = []
        var update = (
            name: String?.none, status: String?.none, rate: Double?.none, burst: Int?.none, scopes: [String]?.none, cidrs: [String]?.none,
            quota: QuotaSetting?.none, removesQuota: false, maxKeys: Int?.none
        )
        if partner.name != actual.name {
            fields.append(FieldChange("name", from: .text(actual.name), to: .text(partner.name)))
            update.name = partner.name
        }
        if partner.status != actual.status {
            fields.append(FieldChange("status", from: .word(actual.status), to: .word(partner.status)))
            update.status = partner.status
        }
        if partner.rate != actual.rateLimit.rate {
            fields.append(FieldChange("rate", from: .number(actual.rateLimit.rate), to: .number(partner.rate)))
            update.rate = partner.rate
        }
        if partner.burst != actual.rateLimit.burst {
            fields.append(FieldChange("burst", from: .number(Double(actual.rateLimit.burst)), to: .number(Double(partner.burst))))
            update.burst = partner.burst
        }
        if Set(partner.scopes) != Set(actual.scopes) {
            fields.append(FieldChange("scopes", from: .list(actual.scopes), to: .list(partner.scopes)))
            update.scopes = partner.scopes
        }
        if Set(partner.allowedCIDRs) != Set(actual.allowedCIDRs) {
            fields.append(FieldChange("allowed_cidrs", from: .list(actual.allowedCIDRs), to: .list(partner.allowedCIDRs)))
            update.cidrs = partner.allowedCIDRs
        }
        if partner.quota != actual.quota {
            fields.append(FieldChange("quota", from: actual.quota.map(StateValue.quota) ?? .none, to: partner.quota.map(StateValue.quota) ?? .none))
            update.quota = partner.quota
            update.removesQuota = partner.quota == nil
        }
        if partner.maxKeys != actual.maxKeys {
            fields.append(FieldChange("max_keys", from: .number(Double(actual.maxKeys)), to: .number(Double(partner.maxKeys))))
            update.maxKeys = partner.maxKeys
        }
        guard !fields.isEmpty else { return nil }
        var change = StateChange(action: .update, kind: .partner, id: actual.partnerID, name: actual.name)
        change.origin = partner.origin
        change.fields = fields
        change.operation = .updatePartner(
            id: actual.partnerID,
            PartnerUpdate(
                name: update.name, rate: update.rate, burst: update.burst, scopes: update.scopes, allowedCIDRs: update.cidrs,
                quota: update.quota, removesQuota: update.removesQuota, status: update.status, maxKeys: update.maxKeys
            ),
            revision: actual.revision
        )
        return change
    }
}

/// Which declared entry is which existing resource: by id first, then each entry without an
/// id by its name among the resources no id claimed.
struct Matching {
    enum Result: Equatable {
        case found(Int)
        case missing
        case ambiguous(Int)
    }

    /// For each declared entry.
    var results: [Result] = []
    /// The indices of the resources matched.
    var claimed = Set<Int>()

    /// `actual` may be restricted with `candidate` (keys: those not ended).
    init(declared: [(id: String?, name: String?)], actual: [(id: String, name: String?)], candidate: (Int) -> Bool = { _ in true }) {
        let byID = Dictionary(actual.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        for entry in declared {
            if let id = entry.id, let index = byID[id] { claimed.insert(index) }
        }
        for entry in declared {
            if let id = entry.id {
                results.append(byID[id].map(Result.found) ?? .missing)
                continue
            }
            let named = actual.indices.filter { !claimed.contains($0) && candidate($0) && actual[$0].name == entry.name }
            switch named.count {
            case 0: results.append(.missing)
            case 1:
                results.append(.found(named[0]))
                claimed.insert(named[0])
            default: results.append(.ambiguous(named.count))
            }
        }
    }
}
