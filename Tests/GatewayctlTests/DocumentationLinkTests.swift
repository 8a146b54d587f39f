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

    /// The top-level directories a repository path in the documentation starts with.
    static let repositoryDirectories = ["Sources/", "Tests/", "docs/", "scripts/", "benchmarks/", "config/", "ops/", "Fuzz/", "api-tests/"]

    /// Every `` `code span` `` that names a repository path: it starts with one of
    /// ``repositoryDirectories`` and holds no space (a span with one is a command line, such as
    /// `` `scripts/dev-redis.sh stop` ``).
    static func repositoryPaths(in text: String) -> [String] {
        let expression = try! NSRegularExpression(pattern: "`([^`\\n]+)`")
        var paths: [String] = []
        for match in expression.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            guard let range = Range(match.range(at: 1), in: text) else { continue }
            let span = String(text[range])
            guard repositoryDirectories.contains(where: { span.hasPrefix($0) }), !span.contains(where: \.isWhitespace) else { continue }
            paths.append(span)
        }
        return paths
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

    /// `[text](target#fragment)` links to a markdown file (or `(#fragment)` to the same page),
    /// as (target, fragment); other links carry no heading anchor.
    static func anchoredLinks(in text: String) -> [(target: String, fragment: String)] {
        let expression = try! NSRegularExpression(pattern: #"\]\(([^)\s#]*)#([^)\s]+)\)"#)
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            guard let target = Range(match.range(at: 1), in: text), let fragment = Range(match.range(at: 2), in: text) else { return nil }
            let path = String(text[target])
            guard path.isEmpty || (path.hasSuffix(".md") && !path.contains(":")) else { return nil }
            return (path, String(text[fragment]))
        }
    }

    /// The anchors GitHub gives a document's headings: lower case, punctuation but `-` and `_`
    /// dropped, spaces made `-` (fenced code is not a heading).
    static func headingAnchors(in text: String) -> Set<String> {
        var anchors = Set<String>()
        var inFence = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inFence.toggle() }
            guard !inFence, let heading = line.firstMatch(of: /^#{1,6} +(.+)$/)?.1 else { continue }
            let kept = heading.lowercased().filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == " " }
            anchors.insert(kept.replacingOccurrences(of: " ", with: "-"))
        }
        return anchors
    }

    @Test func theAnchorFinderSeesHeadingsAsGitHubNamesThem() {
        let text = "# Partner Gateway\n## Operations: logs, metrics & reload\n```\n# not a heading\n```\n### `GET /v1/status`\n"
        #expect(Self.headingAnchors(in: text) == ["partner-gateway", "operations-logs-metrics--reload", "get-v1status"])
        #expect(Self.anchoredLinks(in: "[a](docs/x.md#one) [b](#two) [c](https://e.com/#three) [d](ops/y.json#four)").map { "\($0.target)#\($0.fragment)" } == ["docs/x.md#one", "#two"])
    }

    /// A link to a section names a heading the target document has, so a renamed heading
    /// that forgets its links fails here.
    @Test func everyAnchorNamesAHeading() throws {
        let rootPath = Self.root.standardizedFileURL.path
        var checked = 0
        for document in try Self.documents() {
            let text = try String(contentsOf: document, encoding: .utf8)
            let name = document.path.replacingOccurrences(of: rootPath + "/", with: "")
            for link in Self.anchoredLinks(in: text) {
                let target = link.target.isEmpty ? document : document.deletingLastPathComponent().appendingPathComponent(link.target).standardizedFileURL
                let anchors = Self.headingAnchors(in: (try? String(contentsOf: target, encoding: .utf8)) ?? "")
                #expect(anchors.contains(link.fragment.lowercased()), "\(name) links \(link.target)#\(link.fragment): no such heading")
                checked += 1
            }
        }
        #expect(checked > 0, "the documents link to sections")
    }

    @Test func thePathFinderSeesRepositoryPathsOnly() {
        let text = "`Sources/A/B.swift` → `Tests/X/` and `docs/y.md`, not `Sourcesque`, `swift build`, `scripts/run.sh --flag` or `GET /healthz`\n`ops/z.json`"
        #expect(Self.repositoryPaths(in: text) == ["Sources/A/B.swift", "Tests/X/", "docs/y.md", "ops/z.json"])
    }

    /// docs/ARCHITECTURE.md is a map of the code by file: every file or directory it names must
    /// exist, so a rename or a removal that forgets the map fails here.
    @Test func everyPathTheArchitectureNamesExists() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let paths = Self.repositoryPaths(in: text)
        #expect(paths.count > 50, "docs/ARCHITECTURE.md names the files of the request path, found \(paths.count)")
        for path in Set(paths).sorted() {
            let target = Self.root.appendingPathComponent(path).standardizedFileURL
            #expect(FileManager.default.fileExists(atPath: target.path), "docs/ARCHITECTURE.md names \(path), which does not exist")
        }
    }
}
