/// The roles of personal admin credentials, and the one table of what each may do
/// (docs/admin-api.md, "Roles", mirrors it and a test keeps the two equal).
///
/// Least privilege (PCI DSS 7): a support agent looks drivers up and ends their sessions but
/// cannot touch a partner's keys; an auditor reads everything and changes nothing; a verifier
/// only verifies.
public enum AdminRole: String, Sendable, CaseIterable {
    /// Everything, including admin credentials. The break-glass `GATEWAY_ADMIN_TOKEN` is one.
    case owner
    /// Partners, their keys and members, and the gateway's status.
    case `operator`
    /// Drivers: find them, list and revoke their sessions, erase them; read partners and keys.
    case support
    /// Every read, including the audit trail and the admin list; no change at all.
    case auditor
    /// A service that checks keys and tokens (`POST /v1/verify`) and can do nothing else; no
    /// other role may verify, so a leaked verifier credential opens nothing of the admin API
    /// and an admin's credential is never spread to services.
    case verifier

    public var permissions: Set<AdminPermission> {
        switch self {
        case .owner:
            Set(AdminPermission.allCases).subtracting([.keysVerify])
        case .`operator`:
            [.partnersRead, .partnersWrite, .keysRead, .keysWrite, .membersRead, .membersWrite, .statusRead]
        case .support:
            [.partnersRead, .keysRead, .usersRead, .sessionsRevoke, .usersErase]
        case .auditor:
            [.partnersRead, .keysRead, .usersRead, .membersRead, .auditRead, .statusRead, .adminsRead]
        case .verifier:
            [.keysVerify]
        }
    }

    public func allows(_ permission: AdminPermission) -> Bool {
        permissions.contains(permission)
    }
}
