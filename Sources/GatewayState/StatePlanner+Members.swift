import GatewayContract

extension StatePlanner {
    /// The members of a partner the gateway holds: each declared member matched (by id, else
    /// by email among the partner's members), their name and role changed in place, and the
    /// partner's other members removed with prune. An email is fixed (a new address is a new
    /// member) and is one member's across all partners.
    func planMembers(
        of partner: DeclaredPartner, _ actual: PartnerInfo, members: [MemberInfo], everyone: MemberIndex, partnerNames: [String: String],
        into plan: inout StatePlan
    ) {
        let matches = Matching(declared: partner.members.map { ($0.id, $0.email) }, actual: members.map { ($0.memberID, $0.email) })
        for (index, member) in partner.members.enumerated() {
            switch matches.results[index] {
            case .found(let actualIndex):
                if let change = compared(member, members[actualIndex], of: partner) { plan.changes.append(change) }
            case .ambiguous(let count):
                plan.changes.append(blocked(
                    .member, name: member.email, partner: partner.name, at: member.origin,
                    "\(count) members of partner \"\(partner.name)\" have the email \(member.email): give the id of the one meant"
                ))
            case .missing:
                plan.changes.append(created(member, of: partner, reference: .id(actual.partnerID), everyone: everyone, partnerNames: partnerNames))
            }
        }
        for index in members.indices where !matches.claimed.contains(index) {
            let member = members[index]
            var change = StateChange(action: .remove, kind: .member, id: member.memberID, name: member.email, partner: actual.name)
            change.fields = [FieldChange("role", from: .word(member.role), to: .none)]
            change.operation = .removeMember(partnerID: actual.partnerID, id: member.memberID, revision: member.revision)
            unnamed(change, into: &plan)
        }
    }

    /// An invitation, unless the id or the email is already another member's.
    func created(
        _ member: DeclaredMember, of partner: DeclaredPartner, reference: PartnerReference, everyone: MemberIndex, partnerNames: [String: String]
    ) -> StateChange {
        var change = StateChange(action: .create, kind: .member, id: member.id, name: member.email, partner: partner.name)
        change.origin = member.origin
        change.fields = [
            FieldChange("email", from: .none, to: .text(member.email)), FieldChange("name", from: .none, to: .text(member.name)),
            FieldChange("role", from: .none, to: .word(member.role)),
        ]
        func whose(_ holder: MemberInfo) -> String {
            "partner \"\(partnerNames[holder.partnerID] ?? holder.partnerID)\" (\(holder.partnerID))"
        }
        if let id = member.id, let elsewhere = everyone.byID[id] {
            change.blocked = "\(id) is a member of \(whose(elsewhere)): a member cannot move to another partner"
        } else if let holder = everyone.byEmail[member.email] {
            change.blocked = holder.partnerID == reference.partnerID
                ? "\(member.email) is member \(holder.memberID)'s: give that id, or none to match the member by email"
                : "\(member.email) is member \(holder.memberID) of \(whose(holder)): one address is one member, of one partner"
        } else {
            change.operation = .createMember(partner: reference, NewMember(memberID: member.id, email: member.email, name: member.name, role: member.role))
        }
        return change
    }

    /// The change that makes `actual` what `member` declares, or nil when they match.
    private func compared(_ member: DeclaredMember, _ actual: MemberInfo, of partner: DeclaredPartner) -> StateChange? {
        var change = StateChange(action: .update, kind: .member, id: actual.memberID, name: actual.email, partner: partner.name)
        change.origin = member.origin
        var update = (name: String?.none, role: String?.none)
        if member.email != actual.email { change.fields.append(FieldChange("email", from: .text(actual.email), to: .text(member.email))) }
        if member.name != actual.name {
            change.fields.append(FieldChange("name", from: .text(actual.name), to: .text(member.name)))
            update.name = member.name
        }
        if member.role != actual.role {
            change.fields.append(FieldChange("role", from: .word(actual.role), to: .word(member.role)))
            update.role = member.role
        }
        guard !change.fields.isEmpty else { return nil }
        if member.email != actual.email {
            change.blocked = "a member's email is fixed (a new address is a new member): declare them without the id, and prune removes \(actual.memberID)"
        } else {
            change.operation = .updateMember(partnerID: actual.partnerID, id: actual.memberID, MemberUpdate(name: update.name, role: update.role), revision: actual.revision)
        }
        return change
    }
}

/// Every member the gateway holds, by id and by email: an id or an address is one member's,
/// whichever partner they belong to.
struct MemberIndex {
    let byID: [String: MemberInfo]
    let byEmail: [String: MemberInfo]

    init(_ members: some Sequence<MemberInfo>) {
        let all = Array(members)
        byID = Dictionary(all.map { ($0.memberID, $0) }, uniquingKeysWith: { first, _ in first })
        byEmail = Dictionary(all.map { ($0.email, $0) }, uniquingKeysWith: { first, _ in first })
    }
}

extension PartnerReference {
    /// The id of a partner the gateway holds; nil for one this apply creates.
    var partnerID: String? {
        if case .id(let id) = self { return id }
        return nil
    }
}
