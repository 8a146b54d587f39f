import CoreMetrics
import Foundation
@testable import GatewayObservability
import Prometheus
import Testing

/// Every metric family the gateway exports, in memory: each one the sources make is declared
/// (``MetricHelp``, ``MetricFamilyType``), and the exporter describes it with a `# HELP` line,
/// the `# TYPE` it declares and the name and help text docs/operations.md lists ("Families"),
/// whether it has series yet or not. The check itself is shown to catch a family without help.
/// (That a running gateway shows them all from start-up: Tests/PartnerGatewayTests/MetricsAtStartUpTests.swift.)
@Suite("Metric families: names, HELP and TYPE (in memory)")
struct MetricFamiliesTests {
    private static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// One family as an exposition describes it.
    struct Described: Equatable {
        var help: String?
        var type: String?
    }

    /// The `# HELP` and `# TYPE` lines of `exposition`, by family (help unescaped).
    static func describedFamilies(in exposition: String) -> [String: Described] {
        var families: [String: Described] = [:]
        for line in exposition.split(separator: "\n") {
            for (prefix, isHelp) in [("# HELP ", true), ("# TYPE ", false)] where line.hasPrefix(prefix) {
                let rest = line.dropFirst(prefix.count)
                let name = String(rest.prefix { $0 != " " })
                let value = String(rest.dropFirst(name.count).drop { $0 == " " })
                if isHelp {
                    families[name, default: Described()].help = value.replacingOccurrences(of: #"\n"#, with: "\n").replacingOccurrences(of: #"\\"#, with: #"\"#)
                } else {
                    families[name, default: Described()].type = value
                }
            }
        }
        return families
    }

    /// The rows of the table under "### Families" in docs/operations.md: name → (type, help).
    static func documentedFamilies() throws -> [String: (type: String, help: String)] {
        let text = try String(contentsOf: repository.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        let section = try #require(text.range(of: "\n### Families\n"), "docs/operations.md has no Families section")
        var families: [String: (type: String, help: String)] = [:]
        for line in text[section.upperBound...].split(separator: "\n").prefix(while: { !$0.hasPrefix("#") }) where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 6 else { continue }
            families[cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = (cells[2], cells[4])
        }
        return families
    }

    /// What is wrong with `exposition` against the documented families: a family without a
    /// `# HELP` line or with empty help, help or type other than the document's, a family the
    /// document does not list, a documented one missing.
    static func problems(in exposition: String, documented: [String: (type: String, help: String)]) -> [String] {
        let described = describedFamilies(in: exposition)
        var problems: [String] = []
        for (name, family) in described.sorted(by: { $0.key < $1.key }) {
            guard let help = family.help, !help.isEmpty else {
                problems.append("\(name) has no HELP")
                continue
            }
            guard let row = documented[name] else {
                problems.append("\(name) is not in docs/operations.md's Families")
                continue
            }
            if help != row.help { problems.append("\(name): HELP \"\(help)\", the document \"\(row.help)\"") }
            if family.type != row.type { problems.append("\(name): TYPE \(family.type ?? "none"), the document \(row.type)") }
        }
        for name in Set(documented.keys).subtracting(described.keys).sorted() {
            problems.append("\(name) is documented but not described")
        }
        return problems
    }

    /// A series of every declared family, made through the exporter's factory as the gateway
    /// makes it (counters, gauges and meters, timers), on a registry of the test's own.
    static func expositionWithASeriesOfEach(_ families: [String: MetricFamilyType]) -> String {
        let registry = PrometheusCollectorRegistry()
        let factory = DescribedMetricsFactory(registry: registry, durationBuckets: GatewayMetrics.latencyBuckets)
        for (name, type) in families {
            switch type {
            case .counter: factory.makeCounter(label: name, dimensions: [("test", "1")]).increment(by: 1)
            case .gauge: factory.makeMeter(label: name, dimensions: [("test", "1")]).set(Int64(1))
            case .histogram: factory.makeTimer(label: name, dimensions: [("test", "1")]).recordNanoseconds(1_000)
            }
        }
        var text = registry.emitToBuffer()
        text += MetricFamilyType.headersOfFamiliesMissing(from: text)
        return String(decoding: text, as: UTF8.self)
    }

    @Test func theTableTheDocumentListsIsTheOneTheExporterDescribes() throws {
        let families = try Self.documentedFamilies()
        #expect(families.count >= 39, "\(families.keys.sorted())")
        #expect(Set(families.keys) == Set(MetricHelp.texts.keys), "docs/operations.md and MetricHelp list different families")
        for (name, family) in families {
            #expect(MetricFamilyType.families[name]?.rawValue == family.type, "\(name): the document says \(family.type)")
        }
    }

    @Test func familiesWithoutSeriesGetHeadersOnly() {
        let exposition = Array("# HELP gateway_build_info x\n# TYPE gateway_build_info gauge\ngateway_build_info{version=\"1\"} 1\n".utf8)
        let headers = String(decoding: MetricFamilyType.headersOfFamiliesMissing(from: exposition), as: UTF8.self)
        #expect(!headers.contains("gateway_build_info"))
        #expect(headers.contains("# HELP gateway_upstream_errors_total Upstream exchanges that failed, by route and kind"))
        #expect(headers.contains("# TYPE gateway_upstream_errors_total counter\n"))
        #expect(headers.split(separator: "\n").allSatisfy { $0.hasPrefix("# HELP ") || $0.hasPrefix("# TYPE ") })
        #expect(MetricFamilyType.describedFamilies(in: exposition) == ["gateway_build_info"])
    }

    /// Before any event (the headers `/metrics` adds for families without series) and after one.
    @Test(arguments: [false, true])
    func everyFamilyIsDescribedAsDocumented(withSeries: Bool) throws {
        let documented = try Self.documentedFamilies()
        let exposition = withSeries
            ? Self.expositionWithASeriesOfEach(MetricFamilyType.families)
            : String(decoding: MetricFamilyType.headersOfFamiliesMissing(from: []), as: UTF8.self)
        #expect(Self.problems(in: exposition, documented: documented) == [])
        #expect(Set(Self.describedFamilies(in: exposition).keys) == Set(MetricFamilyType.families.keys))
    }

    /// The check above is not vacuous: a family made with a label nobody declared is exported
    /// without `# HELP`, and reported; so is a documented family the exposition lacks.
    @Test func aFamilyWithoutHelpIsReported() throws {
        var documented = try Self.documentedFamilies()
        var families = MetricFamilyType.families
        families["gateway_undeclared_total"] = .counter
        let exposition = Self.expositionWithASeriesOfEach(families)
        #expect(exposition.contains("# TYPE gateway_undeclared_total counter"))
        #expect(!exposition.contains("# HELP gateway_undeclared_total"))
        #expect(Self.problems(in: exposition, documented: documented) == ["gateway_undeclared_total has no HELP"])

        documented["gateway_documented_only_total"] = ("counter", "Only in the document.")
        documented["gateway_http_requests_total"]?.help = "Something else."
        #expect(Self.problems(in: Self.expositionWithASeriesOfEach(MetricFamilyType.families), documented: documented) == [
            "gateway_http_requests_total: HELP \"\(MetricHelp.texts["gateway_http_requests_total"]!)\", the document \"Something else.\"",
            "gateway_documented_only_total is documented but not described",
        ])
    }

    /// Every metric label the sources make (`Counter(label: "gateway_…")`,
    /// `GatewayMetrics.counter("gateway_…")`, the `process_*` gauges) is a declared family, so
    /// none is exported without help.
    @Test func everyLabelTheSourcesMakeIsDeclared() throws {
        let sources = Self.repository.appendingPathComponent("Sources")
        let declarations = ["MetricHelp.swift", "MetricFamilyType.swift"]
        let enumerator = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var made: [String: String] = [:]
        for case let file as URL in enumerator where file.pathExtension == "swift" && !declarations.contains(file.lastPathComponent) {
            let text = try String(contentsOf: file, encoding: .utf8)
            let path = String(file.path.dropFirst(Self.repository.path.count + 1))
            for match in text.matches(of: /"((?:gateway|process)_[a-z0-9_]+)"/) {
                made[String(match.1)] = made[String(match.1)] ?? path
            }
        }
        #expect(made.count >= 40, "found \(made.keys.sorted()) in Sources")
        for (name, file) in made.sorted(by: { $0.key < $1.key }) {
            #expect(MetricHelp.texts[name] != nil, "\(file) makes \(name), which MetricHelp does not declare")
        }
        #expect(Set(MetricHelp.texts.keys).subtracting(made.keys).sorted() == [], "declared but made nowhere in Sources")
    }
}
