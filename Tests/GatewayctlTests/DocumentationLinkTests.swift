import Foundation
import Testing

/// Every relative link in README.md and docs/*.md names a file or directory that exists in
/// the repository, so the documentation never points a reader at something missing (or
/// outside the repository).
@Suite struct DocumentationLinkTests {
    /// The package root: three levels above this file (Tests/GatewayctlTests/<file>).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func documents() throws -> [URL] {
        let docs = root.appendingPathComponent("docs")
        let names = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }.sorted()
        return [root.appendingPathComponent("README.md")] + names.map { docs.appendingPathComponent($0) }
    }

    /// `[text](target)` and `[text]: target` links, without their `#fragment`; absolute URLs
    /// (`http:`, `https:`, `mailto:`) and same-page anchors are not paths.
    static func relativeLinks(in text: String) -> [String] {
        let patterns = [#"\]\(([^)\s]+)(?:\s+"[^"]*")?\)"#, #"(?m)^\s*\[[^\]]+\]:\s*(\S+)"#]
        var links: [String] = []
        for pattern in patterns {
            let expression = try! NSRegularExpression(pattern: pattern)
            for match in expression.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                guard let range = Range(match.range(at: 1), in: text) else { continue }
                let target = String(text[range]).split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
                if target.isEmpty || target.contains(":") { continue }
                links.append(target.removingPercentEncoding ?? target)
            }
        }
        return links
    }

    @Test func theLinkFinderSeesEveryKindOfLink() {
        let text = "[a](docs/x.md) [b](../y.md#part) [c](#anchor) [d](https://example.com/z) [e](z.md \"title\")\n[ref]: ./w.md\n"
        #expect(Self.relativeLinks(in: text) == ["docs/x.md", "../y.md", "z.md", "./w.md"])
    }

    @Test func everyRelativeLinkExistsInTheRepository() throws {
        let documents = try Self.documents()
        #expect(documents.count > 1, "docs/ has markdown files")
        let rootPath = Self.root.standardizedFileURL.path
        for document in documents {
            let text = try String(contentsOf: document, encoding: .utf8)
            for link in Self.relativeLinks(in: text) {
                let target = document.deletingLastPathComponent().appendingPathComponent(link).standardizedFileURL
                let name = document.path.replacingOccurrences(of: rootPath + "/", with: "")
                #expect(target.path.hasPrefix(rootPath + "/"), "\(name) links \(link), outside the repository")
                #expect(FileManager.default.fileExists(atPath: target.path), "\(name) links \(link), which does not exist")
            }
        }
    }
}
