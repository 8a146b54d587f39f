import GatewayContract
import Hummingbird
import KeyRegistry

/// `GET /portal/v1/me`: the signed-in member, their partner (with what the operator granted it,
/// the bounds of the member's changes) and their role's permissions.
struct PortalMeController {
    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("me") { _, _ -> PortalMe in
            let caller = try PortalCaller.required()
            let permissions = caller.member.role.permissions.sorted().map(\.rawValue)
            return PortalMe(member: MemberInfo(caller.member), partner: PartnerInfo(caller.partner), permissions: permissions)
        }
    }
}
