import ArgumentParser
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
        #expect(before.global.json)
        #expect(before.global.adminToken == "t")
        let after = try #require(
            try Gatewayctl.parseAsRoot(["partners", "list", "--json", "--admin-url", "http://h:1"]) as? Gatewayctl.Partners.List
        )
        #expect(after.global.json)
        #expect(after.global.adminURL == "http://h:1")
    }

    @Test func partnerOptions() throws {
        let create = try #require(
            try Gatewayctl.parseAsRoot(["partners", "create", "--name", "N", "--rate", "0.5", "--burst", "5", "--scopes", "a:b,c:d"])
                as? Gatewayctl.Partners.Create
        )
        #expect(create.rate == 0.5)
        #expect(create.burst == 5)
        #expect(create.scopes?.scopes == ["a:b", "c:d"])
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["partners", "create", "--name", "N", "--burst", "0"]) }
    }

    @Test func keyOptions() throws {
        let create = try #require(
            try Gatewayctl.parseAsRoot(["keys", "create", "--partner", "ptr_1", "--expires-in", "90d"]) as? Gatewayctl.Keys.Create
        )
        #expect(create.expiresIn?.description == "90d")
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["keys", "create", "--partner", "ptr_1", "--expires-in", "0"]) }
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["audit", "--limit", "1001"]) }
    }

    @Test func theRootHelpDocumentsTheEnvironmentAndExitCodes() {
        let help = Gatewayctl.helpMessage(columns: 100)
        for text in ["GATEWAY_ADMIN_URL", "GATEWAY_ADMIN_TOKEN", "64", "cannot reach the gateway"] {
            #expect(help.contains(text), "\(text) missing from --help")
        }
    }
}
