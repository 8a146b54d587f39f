import GatewayContract
@testable import KeyRegistry
import Testing

/// The roles a request or a state file may name, admins' and members', are the roles the
/// registry knows: a role added to one and not the other would be refused by gatewayctl or
/// unknown to the gateway.
@Suite struct AdminRoleTests {
    @Test func theInputRulesNameEveryRoleAndNoOther() {
        #expect(AdminInputRules.roles == AdminRole.allCases.map(\.rawValue))
    }

    @Test func theInputRulesNameEveryMemberRoleAndNoOther() {
        #expect(AdminInputRules.memberRoles == MemberRole.allCases.map(\.rawValue))
    }
}
