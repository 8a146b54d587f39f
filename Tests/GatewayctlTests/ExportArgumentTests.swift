import Testing
@testable import gatewayctl

/// `export`'s `-o`, parsed without a gateway: a file, never one of the other commands' formats.
@Suite struct ExportArgumentTests {
    @Test func aFormatNameIsNotTakenForAFile() throws {
        for format in ["yaml", "json", "table", "csv"] {
            #expect(throws: (any Error).self, "-o \(format)") { try Gatewayctl.parseAsRoot(["export", "-o", format]) }
        }
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["export", "--json"]) }
        let export = try #require(try Gatewayctl.parseAsRoot(["export", "-o", "state/all.yaml"]) as? Gatewayctl.Export)
        #expect(export.display.text == "state/all.yaml")
    }
}
