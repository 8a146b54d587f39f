import Foundation
@testable import GatewayEndpoints
import KeyRegistry
import NIOCore
import Testing

/// docs/portal.md's role table says exactly what ``PortalRoute/all`` and ``MemberRole`` say, and
/// the portal's pages keep to their Content-Security-Policy (in memory).
@Suite("Portal: the documented role table and the pages")
struct PortalDocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theDocumentedTableIsTheCodesTable() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("docs/portal.md"), encoding: .utf8)
        let header = "| route | needs | " + MemberRole.allCases.map(\.rawValue).joined(separator: " | ") + " |"
        let lines = text.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex(of: header), "docs/portal.md has no line \(header)")
        let documented = lines[(start + 2)...].prefix { $0.hasPrefix("|") }
        let expected = PortalRoute.all.map { route in
            let needs = switch route.access {
            case .open: "nothing (signs in)"
            case .anyRole: "a session"
            case .permission(let permission): "`\(permission.rawValue)`"
            }
            let path = route.path.replacingOccurrences(of: ":key", with: "{key_id}").replacingOccurrences(of: ":member", with: "{member_id}")
            return "| `\(route.method.rawValue) /portal/v1/\(path)` | \(needs) | " + MemberRole.allCases.map { route.allows($0) ? "yes" : "-" }.joined(separator: " | ") + " |"
        }
        #expect(Array(documented) == expected)
    }

    /// No inline script, style or event handler anywhere in the pages: the CSP would block
    /// them, so a page relying on one would break without a word.
    @Test func thePagesHoldNoInlineScriptOrStyle() throws {
        let site = try PortalSite.load()
        let page = try #require(site.files["index.html"])
        let html = String(buffer: page.body)
        #expect(page.contentType.hasPrefix("text/html"))
        for forbidden in ["<script>", "style=", " onclick", " onload", " onsubmit", "javascript:", "http://", "https://"] {
            #expect(!html.contains(forbidden), "index.html holds \(forbidden)")
        }
        let scripts = html.components(separatedBy: "<script").dropFirst()
        #expect(scripts.count == 2 && scripts.allSatisfy { $0.hasPrefix(" src=\"") }, "every script is a file of the portal's")
        let script = String(buffer: try #require(site.files["portal.js"]).body)
        #expect(!script.contains("localStorage") && !script.contains("sessionStorage") && !script.contains("document.cookie"))
        #expect(!script.contains("innerHTML") && !script.contains("eval("), "text goes in as text")
        #expect(try #require(site.files["chart.min.js"]).body.readableBytes > 100_000, "Debian's Chart.js")
        #expect(PortalSiteController.securityHeaders[.contentSecurityPolicy]?.contains("script-src 'self';") == true)
        #expect(PortalSiteController.securityHeaders[.xFrameOptions] == "DENY")
    }
}
