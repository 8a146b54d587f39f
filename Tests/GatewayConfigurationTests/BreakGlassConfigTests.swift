@testable import GatewayConfiguration
import Testing
import TestSupport

/// `admin.break_glass`: the shared token is required by default, and refused once turned off.
@Suite("Configuration: the break-glass admin token (in memory)")
struct BreakGlassConfigTests {
    static let withoutToken = TestConfig.environment.filter { $0.key != "GATEWAY_ADMIN_TOKEN" }

    @Test func requiredByDefault() throws {
        let missing = try #require(throws: ConfigError.self) { try TestConfig.load("otp: {mode: uat}", environment: Self.withoutToken) }
        #expect(missing.key == "GATEWAY_ADMIN_TOKEN" && missing.description.contains("admin.break_glass: false"))
        #expect(try TestConfig.load("otp: {mode: uat}").secrets.adminToken != nil)
    }

    @Test func turnedOffItMustNotBeSet() throws {
        let config = try TestConfig.load("otp: {mode: uat}\nadmin: {break_glass: false}", environment: Self.withoutToken)
        #expect(config.secrets.adminToken == nil)
        let leftover = try #require(throws: ConfigError.self) { try TestConfig.load("otp: {mode: uat}\nadmin: {break_glass: false}") }
        #expect(leftover.key == "GATEWAY_ADMIN_TOKEN" && leftover.description.contains("break_glass is false"))
        #expect(!leftover.description.contains(GatewayProcess.adminToken))
    }
}
