import Foundation

/// One admin action in the audit log.
public struct AuditEntry: Codable, Sendable, Hashable {
    /// The entry's position in the log, usable as a pagination cursor.
    public let id: String
    public let at: Date
    /// Who acted, as the caller declared it in `X-Admin-Actor` (`unknown` when it did not).
    public let actor: String
    /// `partner.create`, `partner.update`, `key.revoke`, ...
    public let action: String
    /// The id acted on.
    public let target: String
    /// The caller's address.
    public let source: String

    public init(id: String, at: Date, actor: String, action: String, target: String, source: String) {
        self.id = id
        self.at = at
        self.actor = actor
        self.action = action
        self.target = target
        self.source = source
    }
}
