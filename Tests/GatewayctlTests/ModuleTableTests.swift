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

    /// The package's targets, tests apart, read from Package.swift's text: each `.target(`,
    /// `.executableTarget(`, `.systemLibrary(` and `.plugin(` call, its `name`, `path` and the
    /// plain names in its `dependencies` (products are in calls, so they are skipped). Not
    /// `swift package dump-package`: under `swift test` it waits for the build folder's lock.
    static func packageTargets() throws -> [String: Row] {
        let text = try String(contentsOf: DocumentationLinkTests.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let kinds = [".target(": "library", ".executableTarget(": "executable", ".systemLibrary(": "system library", ".plugin(": "build plugin"]
        var found: [(name: String, kind: String, path: String?, dependencies: [String])] = []
        for (call, kind) in kinds {
            var rest = text[...]
            while let range = rest.range(of: call) {
                let body = balanced(rest[range.upperBound...], open: "(", close: ")")
                rest = rest[range.upperBound...]
                guard let name = stringArgument("name", in: body) else { continue }
                let dependencies = body.range(of: "dependencies: [").map { balanced(body[$0.upperBound...], open: "[", close: "]") }
                found.append((name, kind, stringArgument("path", in: body), dependencies.map(topLevelStrings) ?? []))
            }
        }
        let names = Set(found.map(\.name))
        var rows: [String: Row] = [:]
        for target in found {
            let kind = target.kind == "library" && target.path?.hasPrefix("Tests/") == true ? "test library" : target.kind
            rows[target.name] = Row(kind: kind, dependsOn: Set(target.dependencies).intersection(names))
        }
        return rows
    }

    /// What follows an opening bracket up to its matching close.
    static func balanced(_ text: Substring, open: Character, close: Character) -> Substring {
        var depth = 1
        var index = text.startIndex
        while index < text.endIndex {
            if text[index] == open { depth += 1 }
            if text[index] == close {
                depth -= 1
                if depth == 0 { return text[..<index] }
            }
            index = text.index(after: index)
        }
        return text
    }

    /// The string literal after `label:` at the call's own level (not inside a nested call).
    static func stringArgument(_ label: String, in body: Substring) -> String? {
        var depth = 0
        var index = body.startIndex
        while index < body.endIndex {
            let character = body[index]
            if character == "(" || character == "[" { depth += 1 }
            if character == ")" || character == "]" { depth -= 1 }
            if depth == 0, body[index...].hasPrefix(label + ": \"") {
                let value = body[body.index(index, offsetBy: label.count + 3)...]
                return value.firstIndex(of: "\"").map { String(value[..<$0]) }
            }
            index = body.index(after: index)
        }
        return nil
    }

    /// The string literals of an array's own level: `"Name"`, not those in `.product(...)`.
    static func topLevelStrings(_ array: Substring) -> [String] {
        var strings: [String] = []
        var depth = 0
        var literal: String?
        for character in array {
            if var open = literal {
                if character == "\"" {
                    if depth == 0 { strings.append(open) }
                    literal = nil
                } else {
                    open.append(character)
                    literal = open
                }
                continue
            }
            switch character {
            case "(": depth += 1
            case ")": depth -= 1
            case "\"": literal = ""
            default: break
            }
        }
        return strings
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
