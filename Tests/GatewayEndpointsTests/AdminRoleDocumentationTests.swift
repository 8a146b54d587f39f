import Foundation
@testable import GatewayEndpoints
import KeyRegistry
import Testing

/// docs/admin-api.md's role table says exactly what ``AdminRoute/all`` and ``AdminRole`` say.
@Suite("Admin API: the documented role table (in memory)")
struct AdminRoleDocumentationTests {
    @Test func theDocumentedTableIsTheCodesTable() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/admin-api.md"), encoding: .utf8)
        let header = "| route | permission | " + AdminRole.allCases.map(\.rawValue).joined(separator: " | ") + " |"
        let lines = text.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex(of: header), "docs/admin-api.md has no line \(header)")
        let documented = lines[(start + 2)...].prefix { $0.hasPrefix("|") }
        let expected = AdminRoute.all.map { route in
            "| `\(route.method.rawValue) /v1/\(route.path.replacingOccurrences(of: ":partner", with: "{partner_id}").replacingOccurrences(of: ":key", with: "{key_id}").replacingOccurrences(of: ":user", with: "{user_id}").replacingOccurrences(of: ":session", with: "{session_id}").replacingOccurrences(of: ":admin", with: "{admin_id}").replacingOccurrences(of: ":member", with: "{member_id}"))` | `\(route.permission.rawValue)` | "
                + AdminRole.allCases.map { $0.allows(route.permission) ? "yes" : "-" }.joined(separator: " | ") + " |"
        }
        #expect(Array(documented) == expected)
    }
}
