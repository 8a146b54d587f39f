/// The roles of a partner's members in the portal, and the one table of what each may do
/// (docs/portal.md, "Roles", mirrors it and a test keeps the two equal).
///
/// Whatever the role, a member acts on their own partner only, and never beyond what the
/// operator granted that partner (``Partner/requireWithinGrant(quota:allowlist:)``).
public enum MemberRole: String, Sendable, CaseIterable, Codable {
    /// Everything a developer may, plus the partner's members.
    case partnerAdmin = "partner_admin"
    /// The partner's keys and usage.
    case developer
    /// Reads only: keys, usage and the partner's audit entries.
    case viewer

    public var permissions: Set<PortalPermission> {
        switch self {
        case .partnerAdmin:
            Set(PortalPermission.allCases)
        case .developer:
            [.keysRead, .keysWrite, .usageRead, .auditRead]
        case .viewer:
            [.keysRead, .usageRead, .auditRead]
        }
    }

    public func allows(_ permission: PortalPermission) -> Bool {
        permissions.contains(permission)
    }
}
