import HTTPTypes

/// A row of a role table (the admin API's ``AdminRoute``, the portal's ``PortalRoute``): a
/// method and a path relative to the API's root, where `:name` stands for one segment. A
/// request is matched against the rows, never against the router, so a route added without a
/// row answers `404` and fails closed.
protocol RoleTableRow: Sendable {
    var method: HTTPRequest.Method { get }
    var path: String { get }
    /// The API's root, the segments every path starts with (`v1`, `portal/v1`).
    static var root: [Substring] { get }
    static var all: [Self] { get }
}

/// What a request is to a role table: a row, or why there is none.
enum RoleTableMatch<Row: RoleTableRow> {
    case route(Row)
    case methodNotAllowed
    case notFound
}

extension RoleTableRow {
    /// `served` picks the rows this listener serves (the admin table spans two); a row it
    /// leaves out answers `404` there.
    static func match(method: HTTPRequest.Method, path: String, served: (Self) -> Bool = { _ in true }) -> RoleTableMatch<Self> {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        guard segments.starts(with: root) else { return .notFound }
        let rest = Array(segments.dropFirst(root.count))
        let candidates = all.filter { served($0) && $0.matches(rest) }
        if let route = candidates.first(where: { $0.method == method }) { return .route(route) }
        return candidates.isEmpty ? .notFound : .methodNotAllowed
    }

    private func matches(_ segments: [Substring]) -> Bool {
        let pattern = path.split(separator: "/")
        guard pattern.count == segments.count else { return false }
        return zip(pattern, segments).allSatisfy { $0.hasPrefix(":") || $0 == $1 }
    }
}
