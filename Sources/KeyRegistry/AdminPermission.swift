/// What an admin route needs. Every route of the admin API names exactly one
/// (`AdminRoute` in the gateway); roles grant sets of them (``AdminRole/permissions``).
public enum AdminPermission: String, Sendable, CaseIterable, Comparable {
    case partnersRead = "partners.read"
    case partnersWrite = "partners.write"
    case keysRead = "keys.read"
    case keysWrite = "keys.write"
    /// Find a driver by phone and list their sessions: reads of personal data, always audited.
    case usersRead = "users.read"
    case sessionsRevoke = "sessions.revoke"
    case usersErase = "users.erase"
    /// A partner's members (people, with their emails): list them.
    case membersRead = "members.read"
    /// Invite, change and remove a partner's members.
    case membersWrite = "members.write"
    case auditRead = "audit.read"
    case statusRead = "status.read"
    case adminsRead = "admins.read"
    case adminsWrite = "admins.write"
    /// Verify a partner's key or a driver's token (`POST /v1/verify` on the authorization
    /// listener): the `verifier` role's one permission, and no other role's.
    case keysVerify = "keys.verify"

    public static func < (lhs: AdminPermission, rhs: AdminPermission) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
