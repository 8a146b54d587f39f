import GatewayPrimitives

/// The rules between a document's entries, after each entry's own fields passed: ids and
/// names that match one thing each and one member per email. Keys within their partner (its
/// scopes, its allowlist) are the planner's to check (``outside(_:scopes:cidrs:)``): a key may
/// hold what its partner has since given up, and only what a plan would write must fit.
enum StateRules {
    static func problems(in document: StateDocument) -> [StateProblem] {
        let partners = document.partners ?? []
        let admins = document.admins ?? []
        var problems = duplicateIDs(partners, what: "partner") + duplicateNames(partners, what: "partner")
        problems += duplicateIDs(partners.flatMap(\.keys), what: "key")
        for partner in partners {
            problems += duplicateNames(partner.keys, what: "key of partner \"\(partner.name)\"")
        }
        problems += duplicateIDs(partners.flatMap(\.members), what: "member") + duplicateEmails(partners)
        return problems + duplicateIDs(admins, what: "admin credential") + duplicateNames(admins, what: "admin credential")
    }

    /// An id names one entry.
    static func duplicateIDs(_ entries: [some Matched], what: String) -> [StateProblem] {
        var seen: [String: StateOrigin] = [:]
        return entries.compactMap { entry in
            guard let id = entry.id else { return nil }
            guard let first = seen[id] else {
                seen[id] = entry.place(of: "id")
                return nil
            }
            return StateProblem(at: entry.place(of: "id"), "duplicate id: \(what) \(id) is also declared at \(first)")
        }
    }

    /// An entry without an id is matched by its name, so a name repeats only among entries
    /// that all have ids.
    static func duplicateNames(_ entries: [some Matched], what: String) -> [StateProblem] {
        var seen: [String: (place: StateOrigin, hasID: Bool)] = [:]
        return entries.compactMap { entry in
            guard let name = entry.matchedName else { return nil }
            guard let first = seen[name] else {
                seen[name] = (entry.place(of: "name"), entry.id != nil)
                return nil
            }
            if first.hasID && entry.id != nil { return nil }
            return StateProblem(
                at: entry.place(of: "name"),
                "duplicate name: \(what) \"\(name)\" is also declared at \(first.place) (entries without an id are matched by name)"
            )
        }
    }

    /// An address is one member, of one partner (as the gateway keeps them): declared once in
    /// all the files.
    static func duplicateEmails(_ partners: [DeclaredPartner]) -> [StateProblem] {
        var seen: [String: (place: StateOrigin, partner: String)] = [:]
        var problems: [StateProblem] = []
        for partner in partners {
            for member in partner.members {
                guard let first = seen[member.email] else {
                    seen[member.email] = (member.place(of: "email"), partner.name)
                    continue
                }
                let whose = first.partner == partner.name ? "" : " for partner \"\(first.partner)\""
                problems.append(StateProblem(
                    at: member.place(of: "email"),
                    "duplicate email: \(member.email) is also declared at \(first.place)\(whose) (one address is one member, of one partner)"
                ))
            }
        }
        return problems
    }

    /// Why scopes or an allowlist a plan would give a key do not fit its partner: a key holds
    /// its partner's scopes or fewer, and is used only from within its partner's allowlist. Nil
    /// when they fit, or when there are none to give (a key keeps what it holds).
    static func outside(_ partner: DeclaredPartner, scopes: [String]?, cidrs: [String]?) -> String? {
        var reasons: [String] = []
        let lacking = (scopes ?? []).filter { !partner.scopes.contains($0) }
        if !lacking.isEmpty {
            reasons.append(
                "\(lacking.joined(separator: ", ")) not held by partner \"\(partner.name)\" (its scopes: \(partner.scopes.joined(separator: ", "))): a key holds its partner's scopes or fewer"
            )
        }
        let wider = (cidrs ?? []).filter { !isWithin($0, partner.allowedCIDRs) }
        if !wider.isEmpty {
            reasons.append(
                "\(wider.joined(separator: ", ")) is not within partner \"\(partner.name)\"'s allowed_cidrs (\(partner.allowedCIDRs.joined(separator: ", "))): a key's allowlist narrows its partner's"
            )
        }
        return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
    }

    /// Whether every address of `range` is in one of `ranges` (empty: any address).
    static func isWithin(_ range: String, _ ranges: [String]) -> Bool {
        guard !ranges.isEmpty else { return true }
        guard let inner = CIDR(range) else { return false }
        return ranges.compactMap(CIDR.init).contains { outer in
            outer.network.count == inner.network.count && outer.prefixLength <= inner.prefixLength && outer.contains(inner.network)
        }
    }
}

/// What the rules compare of an entry: its id and the name it is matched by.
protocol Matched: Placed {
    var id: String? { get }
    var matchedName: String? { get }
}

extension DeclaredPartner: Matched {
    var matchedName: String? { name }
}

extension DeclaredKey: Matched {
    var matchedName: String? { name }
}

extension DeclaredMember: Matched {
    var matchedName: String? { email }
}

extension DeclaredAdmin: Matched {
    var matchedName: String? { name }
}
