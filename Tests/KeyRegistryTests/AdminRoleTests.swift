import GatewayContract
@testable import KeyRegistry
import Testing

/// The roles a request or a state file may name are the roles the registry knows: a role
/// added to one and not the other would be refused by gatewayctl or unknown to the gateway.
@Suite struct AdminRoleTests {
    @Test func theInputRulesNameEveryRoleAndNoOther() {
        #expect(AdminInputRules.roles == AdminRole.allCases.map(\.rawValue))
    }
}
