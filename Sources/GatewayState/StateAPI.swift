import GatewayContract

/// The admin API calls partners as code makes, one per change; gatewayctl's client answers
/// them over HTTP, the tests in memory. A change to an existing resource carries the revision
/// it was planned against (`If-Match`): one changed meanwhile is refused, never half-changed.
public protocol StateAPI: Sendable {
    func partners(_ page: PageRequest) async throws -> Page<PartnerInfo>
    func keys(partnerID: String, _ page: PageRequest) async throws -> Page<KeyInfo>
    func members(partnerID: String, _ page: PageRequest) async throws -> Page<MemberInfo>
    func admins(_ page: PageRequest) async throws -> Page<AdminInfo>

    func createPartner(_ partner: NewPartner) async throws -> PartnerInfo
    func updatePartner(_ partnerID: String, _ update: PartnerUpdate, revision: Int) async throws -> PartnerInfo
    func createKey(partnerID: String, _ key: NewKey) async throws -> CreatedKey
    func updateKey(_ keyID: String, _ update: KeyUpdate, revision: Int) async throws -> KeyInfo
    func revokeKey(_ keyID: String, revision: Int) async throws -> RevokedKey
    func createMember(partnerID: String, _ member: NewMember) async throws -> MemberInfo
    func updateMember(partnerID: String, _ memberID: String, _ update: MemberUpdate, revision: Int) async throws -> MemberInfo
    func removeMember(partnerID: String, _ memberID: String, revision: Int) async throws
    func createAdmin(_ admin: NewAdmin) async throws -> CreatedAdmin
    func revokeAdmin(_ adminID: String, revision: Int) async throws -> RevokedAdmin
}
