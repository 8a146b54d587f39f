import HTTPTypes
import KeyRegistry

/// Every route of the portal API and what it needs: the table ``PortalAuthMiddleware``
/// enforces, with ``MemberRole/permissions`` (docs/portal.md, "Roles", mirrors both). A path
/// under `/portal/v1` with no row is `404` whatever the router holds.
struct PortalRoute: RoleTableRow, Equatable, CustomStringConvertible {
    enum Access: Sendable, Equatable {
        /// The sign-in steps: no session yet.
        case open
        /// A session, whatever the member's role.
        case anyRole
        /// A session whose member's role holds the permission.
        case permission(PortalPermission)
    }

    let method: HTTPRequest.Method
    /// Relative to `/portal/v1`; `:name` stands for one path segment.
    let path: String
    let access: Access
    static let root: [Substring] = ["portal", "v1"]

    static let all: [PortalRoute] = [
        PortalRoute(.post, "session/code", .open),
        PortalRoute(.post, "session", .open),
        PortalRoute(.delete, "session", .anyRole),
        PortalRoute(.get, "me", .anyRole),
        PortalRoute(.get, "keys", .permission(.keysRead)),
        PortalRoute(.post, "keys", .permission(.keysWrite)),
        PortalRoute(.patch, "keys/:key", .permission(.keysWrite)),
        PortalRoute(.post, "keys/:key/rotate", .permission(.keysWrite)),
        PortalRoute(.post, "keys/:key/revoke", .permission(.keysWrite)),
        PortalRoute(.get, "usage", .permission(.usageRead)),
        PortalRoute(.get, "audit", .permission(.auditRead)),
        PortalRoute(.get, "members", .permission(.membersRead)),
        PortalRoute(.post, "members", .permission(.membersWrite)),
        PortalRoute(.patch, "members/:member", .permission(.membersWrite)),
        PortalRoute(.delete, "members/:member", .permission(.membersWrite)),
    ]

    init(_ method: HTTPRequest.Method, _ path: String, _ access: Access) {
        self.method = method
        self.path = path
        self.access = access
    }

    var description: String { "\(method.rawValue) /portal/v1/\(path)" }

    /// Whether `role` may call this route (open routes need no session at all).
    func allows(_ role: MemberRole) -> Bool {
        switch access {
        case .open, .anyRole: true
        case .permission(let permission): role.allows(permission)
        }
    }
}
