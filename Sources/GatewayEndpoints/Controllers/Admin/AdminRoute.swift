import HTTPTypes
import KeyRegistry

/// Every route of the admin API and the one permission it needs: the table
/// ``AdminAuthMiddleware`` enforces, with ``AdminRole/permissions`` (docs/admin-api.md,
/// "Roles", mirrors both). A path under `/v1` with no row here is `404` whatever the router
/// holds, so a route added without a row fails closed and its tests show it.
struct AdminRoute: RoleTableRow, Equatable, CustomStringConvertible {
    /// The listeners that take admin credentials: the admin API's, and the authorization
    /// listener's verify API (docs/edges.md).
    enum Listener: Sendable, Equatable {
        case admin
        case authz
    }

    let method: HTTPRequest.Method
    /// Relative to `/v1`; `:name` stands for one path segment.
    let path: String
    let permission: AdminPermission
    /// Where the route is served; on the other listener its path is `404`.
    let listener: Listener
    static let root: [Substring] = ["v1"]

    static let all: [AdminRoute] = [
        AdminRoute(.post, "partners", .partnersWrite),
        AdminRoute(.get, "partners", .partnersRead),
        AdminRoute(.get, "partners/:partner", .partnersRead),
        AdminRoute(.patch, "partners/:partner", .partnersWrite),
        AdminRoute(.post, "partners/:partner/disable", .partnersWrite),
        AdminRoute(.post, "partners/:partner/enable", .partnersWrite),
        AdminRoute(.get, "partners/:partner/usage", .partnersRead),
        AdminRoute(.post, "partners/:partner/keys", .keysWrite),
        AdminRoute(.get, "partners/:partner/keys", .keysRead),
        AdminRoute(.post, "partners/:partner/members", .membersWrite),
        AdminRoute(.get, "partners/:partner/members", .membersRead),
        AdminRoute(.patch, "partners/:partner/members/:member", .membersWrite),
        AdminRoute(.delete, "partners/:partner/members/:member", .membersWrite),
        AdminRoute(.post, "keys/find", .keysRead),
        AdminRoute(.get, "keys/:key", .keysRead),
        AdminRoute(.patch, "keys/:key", .keysWrite),
        AdminRoute(.get, "keys/:key/usage", .keysRead),
        AdminRoute(.post, "keys/:key/rotate", .keysWrite),
        AdminRoute(.post, "keys/:key/revoke", .keysWrite),
        AdminRoute(.post, "users/find", .usersRead),
        AdminRoute(.get, "users/:user/sessions", .usersRead),
        AdminRoute(.post, "users/:user/sessions/:session/revoke", .sessionsRevoke),
        AdminRoute(.post, "users/:user/revoke-sessions", .sessionsRevoke),
        AdminRoute(.post, "users/:user/erase", .usersErase),
        AdminRoute(.get, "audit", .auditRead),
        AdminRoute(.get, "audit/trimmed", .auditRead),
        AdminRoute(.get, "status", .statusRead),
        AdminRoute(.post, "admins", .adminsWrite),
        AdminRoute(.get, "admins", .adminsRead),
        AdminRoute(.get, "admins/:admin", .adminsRead),
        AdminRoute(.post, "admins/:admin/rotate", .adminsWrite),
        AdminRoute(.post, "admins/:admin/revoke", .adminsWrite),
        AdminRoute(.post, "verify", .keysVerify, on: .authz),
    ]

    init(_ method: HTTPRequest.Method, _ path: String, _ permission: AdminPermission, on listener: Listener = .admin) {
        self.method = method
        self.path = path
        self.permission = permission
        self.listener = listener
    }

    var description: String { "\(method.rawValue) /v1/\(path)" }

    /// What a request for `path` with `method` is on `listener`: its route, or why there is none.
    static func match(method: HTTPRequest.Method, path: String, on listener: Listener) -> RoleTableMatch<AdminRoute> {
        match(method: method, path: path, served: { $0.listener == listener })
    }
}
