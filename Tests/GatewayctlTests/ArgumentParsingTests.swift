import ArgumentParser
import GatewayContract
import Testing
@testable import gatewayctl

/// The command line as the user types it, parsed without running anything.
@Suite struct ArgumentParsingTests {
    @Test func graceZeroIsSentAsZeroSeconds() throws {
        let command = try Gatewayctl.parseAsRoot(["keys", "rotate", "key_1", "--grace", "0"])
        let rotate = try #require(command as? Gatewayctl.Keys.Rotate)
        #expect(rotate.keyID == "key_1")
        #expect(rotate.grace?.description == "0s")
    }

    @Test func aBadDurationIsAUsageError() {
        do {
            _ = try Gatewayctl.parseAsRoot(["keys", "rotate", "key_1", "--grace", "ten"])
            Issue.record("--grace ten was accepted")
        } catch {
            #expect(Gatewayctl.exitCode(for: error) == .validationFailure)
            #expect(Gatewayctl.message(for: error).contains("'ten'"))
        }
    }

    @Test func globalOptionsWorkBeforeAndAfterTheSubcommand() throws {
        let before = try #require(
            try Gatewayctl.parseAsRoot(["--json", "--admin-token", "t", "partners", "list"]) as? Gatewayctl.Partners.List
        )
        #expect(before.global.display.json)
        #expect(before.global.connection.adminToken == "t")
        let after = try #require(
            try Gatewayctl.parseAsRoot(["partners", "list", "--json", "--admin-url", "http://h:1"]) as? Gatewayctl.Partners.List
        )
        #expect(after.global.display.json)
        #expect(after.global.connection.adminURL == "http://h:1")
    }

    @Test func partnerOptions() throws {
        let create = try #require(
            try Gatewayctl.parseAsRoot(["partners", "create", "--name", "N", "--rate", "0.5", "--burst", "5", "--scopes", "a:b,c:d"])
                as? Gatewayctl.Partners.Create
        )
        #expect(create.limits.rate == 0.5)
        #expect(create.limits.burst == 5)
        #expect(create.limits.scopes?.scopes == ["a:b", "c:d"])
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["partners", "create", "--name", "N", "--burst", "0"]) }
    }

    @Test func keyOptions() throws {
        let create = try #require(
            try Gatewayctl.parseAsRoot(["keys", "create", "--partner", "ptr_1", "--expires-in", "90d"]) as? Gatewayctl.Keys.Create
        )
        #expect(create.expiresIn?.description == "90d")
        let compound = try #require(
            try Gatewayctl.parseAsRoot(["keys", "create", "--partner", "ptr_1", "--expires-in", "1d12h", "--name", "checkout", "--meta", "team=payments", "--meta", "url=a=b"])
                as? Gatewayctl.Keys.Create
        )
        #expect(compound.expiresIn?.milliseconds == 129_600_000)
        #expect(try MetaEntry.dictionary(compound.meta) == ["team": "payments", "url": "a=b"])
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["keys", "create", "--partner", "ptr_1", "--meta", "novalue"]) }
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["keys", "create", "--partner", "ptr_1", "--meta", "a=1", "--meta", "a=2"]) }
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["keys", "create", "--partner", "ptr_1", "--expires-in", "0"]) }
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["audit", "--limit", "1001"]) }
    }

    @Test func outputFormats() throws {
        let yaml = try #require(try Gatewayctl.parseAsRoot(["partners", "list", "-o", "yaml", "--no-headers"]) as? Gatewayctl.Partners.List)
        #expect(yaml.global.printer.format == .yaml)
        #expect(!yaml.global.printer.headers)
        let json = try #require(try Gatewayctl.parseAsRoot(["--json", "partners", "list"]) as? Gatewayctl.Partners.List)
        #expect(json.global.printer.format == .json)
        let table = try #require(try Gatewayctl.parseAsRoot(["partners", "list"]) as? Gatewayctl.Partners.List)
        #expect(table.global.printer.format == .table && table.global.printer.headers)
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["partners", "list", "-o", "xml"]) }
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["partners", "list", "-o", "yaml", "--json"]) }
    }

    @Test func pagingOptionsAreChecked() throws {
        let list = try #require(try Gatewayctl.parseAsRoot(["keys", "list", "--partner", "ptr_1", "--limit", "2", "--after", "key_1"]) as? Gatewayctl.Keys.List)
        #expect(try list.page.request(defaultLimit: 100) == PageRequest(limit: "2", after: "key_1", defaultLimit: 100))
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["partners", "list", "--limit", "0"]) }
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["audit", "--after", ""]) }
    }

    @Test func partnerUpdateNeedsSomethingToChange() throws {
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["partners", "update", "ptr_1"]) }
        let update = try #require(try Gatewayctl.parseAsRoot(["partners", "update", "ptr_1", "--burst", "7"]) as? Gatewayctl.Partners.Update)
        #expect(update.update == PartnerUpdate(burst: 7))
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["partners", "update", "ptr_1", "--rate", "-1"]) }
    }

    @Test func yesAndDryRunContradictEachOther() {
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["keys", "revoke", "key_1", "--yes", "--dry-run"]) }
    }

    @Test func theRootHelpDocumentsTheEnvironmentAndExitCodes() {
        let help = Gatewayctl.helpMessage(columns: 100)
        for text in ["GATEWAY_ADMIN_URL", "GATEWAY_ADMIN_TOKEN", "GATEWAY_ADMIN_TOKEN_FILE", "config.yaml", "--generate-completion-script", "64", "cannot reach the gateway"] {
            #expect(help.contains(text), "\(text) missing from --help")
        }
    }
}
