/// Whom the audit trail names as acting for the rest of a request: the admin credential of an
/// admin API call (``AdminAuthMiddleware``) or the member of a portal call
/// (``PortalAuthMiddleware``). A task-local value, so ``AdminAudit`` and the controllers the
/// two APIs share read it without the request context growing a field.
struct AuditActor: Sendable, Equatable {
    /// `adm_...`, `root`, or `mbr_...`.
    let id: String
    let name: String
    /// A member's partner: their entries are listed among the partner's own too. nil for an admin.
    let partnerID: String?

    @TaskLocal static var current: AuditActor?
}
