import GatewayContract
import Testing
@testable import gatewayctl

/// `usage`, `keys update` and the allowlist and quota options of `partners update`, parsed
/// without a gateway.
@Suite struct PartnerControlsArgumentTests {
    @Test func usageNamesExactlyOneOwnerAndTakesCSV() throws {
        let usage = try #require(try Gatewayctl.parseAsRoot(["usage", "--key", "key_1", "--from", "2026-11-01", "--to", "2026-11-30", "-o", "csv"]) as? Gatewayctl.Usage)
        #expect(usage.key == "key_1" && usage.partner == nil)
        #expect(usage.global.printer.format == .csv)
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["usage", "--from", "2026-11-01", "--to", "2026-11-30"]) }
        #expect(throws: (any Error).self) {
            try Gatewayctl.parseAsRoot(["usage", "--key", "key_1", "--partner", "ptr_1", "--from", "2026-11-01", "--to", "2026-11-30"])
        }
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["usage", "--key", "key_1", "--from", "2026-11-01"]) }
    }

    @Test func keysUpdateBuildsTheWireBody() throws {
        let update = try #require(
            try Gatewayctl.parseAsRoot(["keys", "update", "key_1", "--allowed-cidrs", "203.0.113.0/24, ::1", "--quota", "100/day"]) as? Gatewayctl.Keys.Update
        )
        #expect(update.update == KeyUpdate(allowedCIDRs: ["203.0.113.0/24", "::1"], quota: QuotaSetting(limit: 100, period: "day")))
        let removing = try #require(try Gatewayctl.parseAsRoot(["keys", "update", "key_1", "--quota", "none", "--allowed-cidrs", ""]) as? Gatewayctl.Keys.Update)
        #expect(removing.update == KeyUpdate(allowedCIDRs: [], removesQuota: true))
        #expect(throws: (any Error).self) { try Gatewayctl.parseAsRoot(["keys", "update", "key_1"]) }
        for bad in ["100", "100/week", "0/day", "lots/month"] {
            #expect(throws: (any Error).self, "\(bad)") { try Gatewayctl.parseAsRoot(["keys", "update", "key_1", "--quota", bad]) }
        }
    }

    @Test func partnersUpdateTakesAQuota() throws {
        let update = try #require(try Gatewayctl.parseAsRoot(["partners", "update", "ptr_1", "--quota", "100000/month"]) as? Gatewayctl.Partners.Update)
        #expect(update.update == PartnerUpdate(quota: QuotaSetting(limit: 100_000, period: "month")))
    }

    @Test func csvQuotesWhatNeedsIt() {
        let table = Table(columns: ["DATE", "REFUSED AUTH"], rows: [["2026-11-26", "a,b"], ["x\"y", "1"]])
        #expect(CSV.rendered(table) == "date,refused_auth\r\n2026-11-26,\"a,b\"\r\n\"x\"\"y\",1\r\n")
        #expect(CSV.rendered(table, headers: false).hasPrefix("2026-11-26"))
    }
}
