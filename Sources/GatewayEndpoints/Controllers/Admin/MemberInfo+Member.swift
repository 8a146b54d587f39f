import GatewayContract
import KeyRegistry

extension MemberInfo {
    init(_ member: Member) {
        self.init(
            memberID: member.id, partnerID: member.partnerID, email: member.email, name: member.name, role: member.role.rawValue,
            revision: member.revision
        )
    }
}
