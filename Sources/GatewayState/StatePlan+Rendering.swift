/// The plan as people and scripts read it: a stable text, resource by resource (`+` create,
/// `~` update, `-` remove, `!` cannot be made), and a JSON document with the same content.
extension StatePlan {
    public var text: String {
        var lines: [String] = []
        for change in changes {
            lines.append("\(change.symbol) \(change.label)")
            for field in change.fields {
                lines.append(change.action == .create ? "    \(field.field): \(field.to)" : "    \(field.field): \(field.from) → \(field.to)")
            }
            if let blocked = change.blocked { lines.append("    cannot be applied: \(blocked)") }
        }
        if !lines.isEmpty { lines.append("") }
        lines.append(summary)
        return lines.joined(separator: "\n") + "\n"
    }

    /// `Plan: 1 to create, 2 to update, 0 to remove.`, or that nothing would change.
    public var summary: String {
        if isEmpty { return "No changes: the gateway matches the files." }
        var text = "Plan: \(count(.create)) to create, \(count(.update)) to update, \(count(.remove)) to remove."
        if !blocked.isEmpty {
            text += " \(blocked.count) \(blocked.count == 1 ? "change" : "changes") the admin API cannot make (marked !)."
        }
        return text
    }

    /// What is left as it is, for a note beside the plan: what `--prune` would remove, and
    /// the credential prune spares.
    public var notes: [String] {
        var notes: [String] = []
        if !kept.isEmpty {
            let shown = kept.prefix(10).map(\.label).joined(separator: ", ")
            notes.append(
                "\(kept.count) not in the files and kept (--prune would remove them): " + shown + (kept.count > 10 ? " and \(kept.count - 10) more" : "")
            )
        }
        for change in spared {
            notes.append("not in the files but kept: \(change.label) is the credential applying the files")
        }
        return notes
    }
}

extension StatePlan: Encodable {
    enum CodingKeys: String, CodingKey {
        case changes, kept, summary
    }

    struct Summary: Encodable {
        let create, update, remove, blocked: Int
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(changes, forKey: .changes)
        try container.encode(kept, forKey: .kept)
        try container.encode(Summary(create: count(.create), update: count(.update), remove: count(.remove), blocked: blocked.count), forKey: .summary)
    }
}

extension StateChange: Encodable {
    enum CodingKeys: String, CodingKey {
        case action, kind, id, name, partner, fields, blocked
        case declaredAt = "declared_at"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(action, forKey: .action)
        try container.encode(kind, forKey: .kind)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(partner, forKey: .partner)
        try container.encode(fields, forKey: .fields)
        try container.encode(blocked, forKey: .blocked)
        try container.encode(origin?.description, forKey: .declaredAt)
    }

    var symbol: String {
        if blocked != nil { return "!" }
        switch action {
        case .create: return "+"
        case .update: return "~"
        case .remove: return "-"
        }
    }

    /// `key "checkout" (key_9a1b…) of partner "NammaYatri"`; `member asha@nammayatri.example
    /// (mbr_6c1f…) of partner "NammaYatri"`.
    public var label: String {
        let named = name.map { " " + StateValue.quoted($0) } ?? ""
        let identified = id.map { " (\($0))" } ?? ""
        switch kind {
        case .partner: return "partner" + named + identified
        case .key: return "key" + named + identified + (partner.map { " of partner " + StateValue.quoted($0) } ?? "")
        case .member: return "member" + (name.map { " " + $0 } ?? "") + identified + (partner.map { " of partner " + StateValue.quoted($0) } ?? "")
        case .admin: return "admin credential" + named + identified
        }
    }
}
