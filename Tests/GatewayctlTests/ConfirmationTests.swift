import Testing
@testable import gatewayctl

/// The `--yes` / `--dry-run` convention, decided without a gateway.
@Suite struct ConfirmationTests {
    private func confirmation(_ arguments: [String] = []) throws -> gatewayctl.Confirmation {
        try gatewayctl.Confirmation.parse(arguments)
    }

    @Test func yesNeverAsks() throws {
        try confirmation(["--yes"]).confirm("Revoke?", terminal: false, readResponse: { () -> String? in Issue.record("asked"); return nil })
    }

    @Test(arguments: ["y", "Y", "yes", " YES "])
    func aTerminalResponseOfYesGoesAhead(_ answer: String) throws {
        try confirmation().confirm("Revoke?", terminal: true, readResponse: { answer })
    }

    @Test(arguments: ["", "n", "no", "yep", nil] as [String?])
    func anythingElseCancelsWithExitFour(_ answer: String?) throws {
        let error = #expect(throws: CtlError.self) { try confirmation().confirm("Revoke?", terminal: true, readResponse: { answer }) }
        #expect(error?.exitCode == 4)
        #expect(error?.message.contains("nothing was changed") == true)
    }

    @Test func withoutATerminalItRefusesAsAUsageError() throws {
        let error = #expect(throws: CtlError.self) { try confirmation().confirm("Revoke key key_1?", terminal: false, readResponse: { "y" }) }
        #expect(error?.exitCode == 64)
        #expect(error?.message.contains("--yes") == true)
        #expect(error?.message.contains("key_1") == true)
    }
}
