import Foundation
import GatewayContract
import Yams

/// The gateway's state as a state file: partners, their keys and admin credentials that have
/// not ended (a revoked or expired key or credential is history, kept in the audit trail) and
/// their members, each with every field the files manage and none of their secrets (nor a
/// member's sessions or sign-in codes). Deterministic: entries
/// sorted by name, then id, fields in one order, so two exports of the same state are the
/// same bytes and a change reads as a small diff in git.
public enum StateExport {
    static let header = "# Partners as code: a state file (docs/state-file.schema.json), read by gatewayctl diff and apply.\n"

    public static func yaml(_ snapshot: GatewaySnapshot) throws -> String {
        var top: [(String, Node)] = [("version", plain(String(StateDocument.version)))]
        let partners = snapshot.partners.sorted { ($0.name, $0.partnerID) < ($1.name, $1.partnerID) }
        top.append(("partners", .sequence(.init(partners.map {
            partner($0, keys: snapshot.keys[$0.partnerID] ?? [], members: snapshot.members[$0.partnerID] ?? [])
        }))))
        if let admins = snapshot.admins {
            let live = admins.filter { $0.status == "active" }.sorted { ($0.name, $0.adminID) < ($1.name, $1.adminID) }
            top.append(("admins", .sequence(.init(live.map(admin)))))
        }
        return header + (try Yams.serialize(node: mapping(top), width: -1, allowUnicode: true))
    }

    static func partner(_ partner: PartnerInfo, keys: [KeyInfo], members: [MemberInfo]) -> Node {
        var fields: [(String, Node)] = [
            ("id", plain(partner.partnerID)),
            ("name", text(partner.name)),
            ("status", plain(partner.status)),
            ("rate", plain(number(partner.rateLimit.rate))),
            ("burst", plain(String(partner.rateLimit.burst))),
            ("scopes", list(partner.scopes)),
        ]
        if !partner.allowedCIDRs.isEmpty { fields.append(("allowed_cidrs", list(partner.allowedCIDRs))) }
        if let quota = partner.quota { fields.append(("quota", quotaNode(quota))) }
        fields.append(("max_keys", plain(String(partner.maxKeys))))
        let live = keys.filter { $0.status == "active" || $0.status == "expiring" }.sorted { ($0.name ?? "", $0.keyID) < ($1.name ?? "", $1.keyID) }
        if !live.isEmpty { fields.append(("keys", .sequence(.init(live.map(key))))) }
        let people = members.sorted { ($0.email, $0.memberID) < ($1.email, $1.memberID) }
        if !people.isEmpty { fields.append(("members", .sequence(.init(people.map(member))))) }
        return mapping(fields)
    }

    static func key(_ key: KeyInfo) -> Node {
        var fields: [(String, Node)] = [("id", plain(key.keyID))]
        if let name = key.name { fields.append(("name", text(name))) }
        fields += [("status", plain(key.status)), ("scopes", list(key.scopes))]
        if let expiry = key.expiresAt { fields.append(("expires_at", plain(StateTime.text(expiry)))) }
        if !key.allowedCIDRs.isEmpty { fields.append(("allowed_cidrs", list(key.allowedCIDRs))) }
        if let quota = key.quota { fields.append(("quota", quotaNode(quota))) }
        if !key.meta.isEmpty {
            fields.append(("meta", .mapping(.init(key.meta.sorted { $0.key < $1.key }.map { (text($0.key), text($0.value)) }, .implicit, .flow))))
        }
        return mapping(fields)
    }

    static func member(_ member: MemberInfo) -> Node {
        mapping([("id", plain(member.memberID)), ("email", text(member.email)), ("name", text(member.name)), ("role", plain(member.role))])
    }

    static func admin(_ admin: AdminInfo) -> Node {
        var fields: [(String, Node)] = [("id", plain(admin.adminID)), ("name", text(admin.name)), ("role", plain(admin.role))]
        if let expiry = admin.expiresAt { fields.append(("expires_at", plain(StateTime.text(expiry)))) }
        return mapping(fields)
    }

    /// `50` for a whole rate, `0.5` otherwise: the shortest text that reads back as the value.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    private static func mapping(_ fields: [(String, Node)]) -> Node {
        .mapping(.init(fields.map { (plain($0.0), $0.1) }))
    }

    private static func quotaNode(_ quota: QuotaSetting) -> Node {
        .mapping(.init([(plain("limit"), plain(String(quota.limit))), (plain("period"), plain(quota.period))], .implicit, .flow))
    }

    private static func list(_ values: [String]) -> Node {
        .sequence(.init(values.map(text), .implicit, .flow))
    }

    /// Text the files hold as written: quoted when plain YAML would read it as something
    /// else (`null`, `true`, `50`), and each `${` written `$${`, so that reading the file back
    /// takes no environment variable's value into a name a partner chose.
    private static func text(_ value: String) -> Node {
        .scalar(value.replacingOccurrences(of: "${", with: "$${").represented())
    }

    /// Ids, numbers, times and the schema's own words, which read back as the text they are.
    private static func plain(_ value: String) -> Node {
        .scalar(.init(value, .implicit, .plain))
    }
}
