import Foundation
import Testing
import TestSupport

/// Every metric family docs/operations.md lists ("Families", where the README sends readers
/// for metrics) is on `/metrics` from start-up, with its HELP and TYPE, before any event made a
/// series of it: dashboards and alert rules never see a family missing. The table is read from
/// the document, so neither can drift from the other.
@Suite("Metrics at start-up")
struct MetricsAtStartUpTests {
    struct Family: Equatable {
        let name: String
        let type: String
        let labelled: Bool
    }

    private static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The rows of the table under "### Families" in docs/operations.md.
    static func documentedFamilies() throws -> [Family] {
        let text = try String(contentsOf: repository.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        let section = try #require(text.range(of: "### Families"), "docs/operations.md has no Families section")
        var families: [Family] = []
        for line in text[section.upperBound...].split(separator: "\n", omittingEmptySubsequences: false).dropFirst() {
            if line.hasPrefix("#") { break }
            guard line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            families.append(Family(name: cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`")), type: cells[2], labelled: !cells[3].isEmpty))
        }
        return families
    }

    @Test(.realProcesses) func everyDocumentedFamilyIsExposedRightAfterStartUp() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: """
        redis: {url: \(redis.url), timeout: \(GatewayProcess.redisTimeout)}
        otp: {mode: uat}
        routes:
          - {name: echo, path_prefix: /echo, upstream: http://127.0.0.1:\(LoopbackPort.free()), auth: none}
        """)
        // The first request the gateway answers is this scrape.
        let metrics = try await DriverHTTP.call(gateway.adminURL + "/metrics")
        try #require(metrics.status == 200)
        let lines = metrics.text.split(separator: "\n").map(String.init)
        for family in try Self.documentedFamilies() {
            #expect(lines.contains { $0.hasPrefix("# HELP \(family.name) ") && $0.count > "# HELP \(family.name) ".count }, "\(family.name) has no HELP")
            #expect(lines.contains("# TYPE \(family.name) \(family.type)"), "\(family.name) has no TYPE \(family.type)")
            if !family.labelled {
                #expect(lines.contains { $0.hasPrefix("\(family.name) ") }, "\(family.name) has no series")
            }
        }
        // Each family is described once.
        let typeLines = lines.filter { $0.hasPrefix("# TYPE ") }
        #expect(Set(typeLines).count == typeLines.count, "\(typeLines)")
    }
}
