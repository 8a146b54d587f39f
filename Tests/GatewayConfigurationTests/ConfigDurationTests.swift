import TestSupport
import Testing
@testable import GatewayConfiguration

/// The configuration reads durations with the gateway's one grammar (the one the admin API
/// and gatewayctl use), compound forms included, and names the key of a bad one.
@Suite struct ConfigDurationTests {
    @Test func compoundDurationsAreAcceptedInTheFile() throws {
        let config = try TestConfig.load("otp: {mode: uat}\ntokens:\n  access_ttl: 1h30m\n  refresh_ttl: 1d12h\n")
        #expect(config.tokens.accessTTL.duration == .seconds(5_400))
        #expect(config.tokens.refreshTTL.duration == .seconds(129_600))
        #expect(config.tokens.accessTTL.description == "1h30m", "the text is kept as written for messages")
    }

    @Test(arguments: [("30m1h", "units go from largest to smallest"), ("1.5h", "unexpected \".\""), ("99999999d", "longer than 36500d")])
    func badDurationsNameTheKeyAndTheReason(text: String, reason: String) throws {
        let error = try #require(throws: ConfigError.self) { try TestConfig.load("otp: {mode: uat}\ntokens:\n  access_ttl: \"\(text)\"\n") }
        #expect(error.key == "tokens.access_ttl")
        #expect(error.description.contains("is not a duration") && error.description.contains(reason), "\(error)")
    }
}
