import GatewayContract

/// What the gateway holds, as the admin API lists it: what export writes and the plan
/// compares the files with.
public struct GatewaySnapshot: Sendable, Equatable {
    public var partners: [PartnerInfo]
    /// Each partner's keys by its id, oldest first; ended ones too.
    public var keys: [String: [KeyInfo]]
    /// Each partner's members by its id, oldest first.
    public var members: [String: [MemberInfo]]
    /// nil when not read (the files have no `admins` section, or export was told to leave
    /// them out).
    public var admins: [AdminInfo]?

    public init(partners: [PartnerInfo], keys: [String: [KeyInfo]], members: [String: [MemberInfo]] = [:], admins: [AdminInfo]?) {
        self.partners = partners
        self.keys = keys
        self.members = members
        self.admins = admins
    }

    /// Reads every partner and admin credential a page of 1000 at a time, and the partners'
    /// keys and members `width` partners at a time: a thousand partners cost a thousand key
    /// lists and a thousand member lists, and one after another they would take seconds of
    /// round trips.
    public static func load(from api: some StateAPI, admins readsAdmins: Bool, width: Int = 16) async throws -> GatewaySnapshot {
        let partners = try await all { try await api.partners($0) }
        let lists = await ParallelCalls.run(partners.map(\.partnerID), width: width) { id in
            (try await all { try await api.keys(partnerID: id, $0) }, try await all { try await api.members(partnerID: id, $0) })
        }
        var keys: [String: [KeyInfo]] = [:]
        var members: [String: [MemberInfo]] = [:]
        for (partner, list) in zip(partners, lists) {
            // A list not read is one left after a failed read; the failure is thrown first.
            guard let (keyList, memberList) = try list?.get() else { continue }
            keys[partner.partnerID] = keyList
            members[partner.partnerID] = memberList
        }
        let admins = readsAdmins ? try await all { try await api.admins($0) } : nil
        return GatewaySnapshot(partners: partners, keys: keys, members: members, admins: admins)
    }

    /// Every item of a list, following its pages.
    private static func all<Item>(_ page: (PageRequest) async throws -> Page<Item>) async throws -> [Item] {
        var items: [Item] = []
        var after: String?
        repeat {
            let request = try PageRequest(limit: String(PageRequest.maximumLimit), after: after, defaultLimit: PageRequest.maximumLimit)
            let answer = try await page(request)
            items += answer.items
            after = answer.nextCursor
        } while after != nil
        return items
    }
}
