/// What a portal route needs beyond a session. Every route of the portal API that acts on the
/// partner names one (`PortalRoute` in the gateway); member roles grant sets of them
/// (``MemberRole/permissions``).
public enum PortalPermission: String, Sendable, CaseIterable, Comparable {
    case keysRead = "keys.read"
    /// Create, change, rotate and revoke the partner's keys, within what the operator granted.
    case keysWrite = "keys.write"
    case usageRead = "usage.read"
    /// The partner's own entries of the audit trail.
    case auditRead = "audit.read"
    case membersRead = "members.read"
    case membersWrite = "members.write"

    public static func < (lhs: PortalPermission, rhs: PortalPermission) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
