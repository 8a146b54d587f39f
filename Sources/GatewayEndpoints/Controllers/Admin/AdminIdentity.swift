import KeyRegistry

/// Who is calling the admin API: the credential the request authenticated with.
///
/// Set by ``AdminAuthMiddleware`` for the rest of the request as a task-local value, so the
/// audit writer and controllers read it without the shared request context growing a field.
struct AdminIdentity: Sendable, Equatable {
    /// `adm_...`, or `root` for the break-glass token.
    let id: String
    let name: String
    let role: AdminRole

    /// `GATEWAY_ADMIN_TOKEN`: the break-glass owner, recorded as `root`.
    static let root = AdminIdentity(id: "root", name: "root", role: .owner)

    @TaskLocal static var current: AdminIdentity?
}
