/// One line of the audit log.
struct AuditEntry: Codable, Equatable {
    let at: String
    /// Self-declared through `X-Admin-Actor`, so absent for callers that do not send it.
    let actor: String?
    /// `partner.create`, `key.rotate`, `sessions.revoke`, ...
    let action: String
    /// The id acted on.
    let target: String
    /// The caller's address; not in the spec's table but worth keeping for investigations.
    let source: String?

    // Written out so a missing actor or source prints as `null`.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(at, forKey: .at)
        try container.encode(actor, forKey: .actor)
        try container.encode(action, forKey: .action)
        try container.encode(target, forKey: .target)
        try container.encode(source, forKey: .source)
    }
}
