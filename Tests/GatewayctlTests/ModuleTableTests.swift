import Foundation
import Testing

/// docs/ARCHITECTURE.md's module table is Package.swift's targets as they are: every target
/// has a row of its kind, every row names a target, and each row's local dependencies (the
/// names in backticks outside the brackets) are exactly the target's.
@Suite struct ModuleTableTests {
    struct Row: Equatable {
        let kind: String
        let dependsOn: Set<String>
    }

    /// The package's targets, tests apart, as `swift package dump-package` describes them.
    static func packageTargets() throws -> [String: Row] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // `swift test` holds the package's lock while the tests run: waiting for it would never end.
        process.arguments = ["swift", "package", "--ignore-lock", "dump-package"]
        process.currentDirectoryURL = DocumentationLinkTests.root
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let targets = try #require(manifest["targets"] as? [[String: Any]])
        let names = Set(targets.compactMap { $0["name"] as? String })
        var rows: [String: Row] = [:]
        for target in targets {
            guard let name = target["name"] as? String, let type = target["type"] as? String, type != "test" else { continue }
            let kind: String
            switch type {
            case "regular": kind = (target["path"] as? String)?.hasPrefix("Tests/") == true ? "test library" : "library"
            case "executable": kind = "executable"
            case "system": kind = "system library"
            case "plugin": kind = "build plugin"
            default: kind = type
            }
            let dependencies = (target["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency -> String? in
                guard let reference = (dependency["byName"] ?? dependency["target"]) as? [Any] else { return nil }
                return reference.first as? String
            }
            rows[name] = Row(kind: kind, dependsOn: Set(dependencies).intersection(names))
        }
        return rows
    }

    /// The rows of the table under "## Modules".
    static func documentedTargets() throws -> [String: Row] {
        let text = try String(contentsOf: DocumentationLinkTests.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## Modules\n").dropFirst().first)
        var rows: [String: Row] = [:]
        for line in section.split(separator: "\n").prefix(while: { !$0.hasPrefix("## ") }) where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 5 else { continue }
            let name = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            // External packages are in brackets; local targets in backticks before them.
            let local = cells[4].split(separator: "[").first.map(String.init) ?? ""
            // Empty pieces kept: a name is every second piece only when the split keeps the one before the first backtick.
            let names = local.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
            rows[name] = Row(kind: cells[2], dependsOn: Set(names))
        }
        return rows
    }

    @Test func theModuleTableIsThePackagesTargets() throws {
        let package = try Self.packageTargets()
        let documented = try Self.documentedTargets()
        #expect(package.count > 10, "found \(package.count) targets in Package.swift")
        for name in Set(package.keys).union(documented.keys).sorted() {
            guard let actual = package[name] else {
                Issue.record("docs/ARCHITECTURE.md has a row for \(name), which Package.swift does not declare")
                continue
            }
            guard let row = documented[name] else {
                Issue.record("Package.swift declares \(name), which docs/ARCHITECTURE.md's module table does not list")
                continue
            }
            #expect(row.kind == actual.kind, "\(name): the table says \(row.kind), Package.swift makes a \(actual.kind)")
            #expect(row.dependsOn == actual.dependsOn, "\(name): the table says it depends on \(row.dependsOn.sorted()), Package.swift on \(actual.dependsOn.sorted())")
        }
    }
}
