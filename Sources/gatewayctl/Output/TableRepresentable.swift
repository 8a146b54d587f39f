import Foundation
import GatewayContract

/// A record that can be a row of a ``Table``; the conformances below decide what each
/// command shows in table mode (the JSON and YAML documents always have every field).
protocol TableRepresentable {
    static var columns: [String] { get }
    var cells: [String] { get }
}

extension Table {
    init<Record: TableRepresentable>(_ records: [Record]) {
        self.init(columns: Record.columns, rows: records.map(\.cells))
    }

    /// Times as the API writes them (`2026-11-22T03:30:00Z`); `never` for none.
    static func time(_ date: Date?, none: String = "never") -> String {
        date.map { $0.formatted(.iso8601) } ?? none
    }

    /// `203.0.113.0/24,::1/128`; `any` for an empty allowlist.
    static func cidrs(_ cidrs: [String]) -> String {
        cidrs.isEmpty ? "any" : cidrs.joined(separator: ",")
    }

    /// `100000/month`; `-` for none.
    static func quota(_ quota: QuotaSetting?) -> String {
        quota.map { "\($0.limit)/\($0.period)" } ?? "-"
    }

    /// `team=payments,env=prod`, sorted so rows compare; `-` for none.
    static func meta(_ meta: [String: String]) -> String {
        meta.isEmpty ? "-" : meta.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
    }
}

extension PartnerInfo: TableRepresentable {
    static let columns = ["PARTNER ID", "NAME", "STATUS", "RATE/S", "BURST", "SCOPES", "CREATED AT", "ALLOWED CIDRS", "QUOTA", "MAX KEYS"]
    var cells: [String] {
        [partnerID, name, status, Self.format(rateLimit.rate), String(rateLimit.burst), scopes.joined(separator: ","), Table.time(createdAt),
         Table.cidrs(allowedCIDRs), Table.quota(quota), String(maxKeys)]
    }

    /// `50`, not `50.0`; fractional rates as they are.
    static func format(_ rate: Double) -> String {
        rate == rate.rounded() && abs(rate) < 1e15 ? String(Int64(rate)) : String(rate)
    }
}

extension MemberInfo: TableRepresentable {
    static let columns = ["MEMBER ID", "EMAIL", "NAME", "ROLE", "PARTNER ID"]
    var cells: [String] { [memberID, email, name, role, partnerID] }
}

extension KeyInfo: TableRepresentable {
    static let columns = [
        "KEY ID", "START", "NAME", "PARTNER ID", "STATUS", "SCOPES", "META", "CREATED AT", "EXPIRES AT", "LAST USED AT", "ALLOWED CIDRS", "QUOTA",
    ]
    var cells: [String] {
        [keyID, start + "…", name ?? "-", partnerID, status, scopes.joined(separator: ","), Table.meta(meta),
         Table.time(createdAt), Table.time(expiresAt), Table.time(lastUsedAt), Table.cidrs(allowedCIDRs), Table.quota(quota)]
    }
}

extension CreatedKey: TableRepresentable {
    // The key itself is printed below the table, on its own line, to be copied whole.
    static let columns = ["KEY ID", "START", "NAME", "PARTNER ID", "SCOPES", "META", "CREATED AT", "EXPIRES AT"]
    var cells: [String] {
        [keyID, start + "…", name ?? "-", partnerID, scopes.joined(separator: ","), Table.meta(meta), Table.time(createdAt), Table.time(expiresAt)]
    }
}

extension UsageInfo.Day: TableRepresentable {
    static let columns = ["DATE", "ALLOWED", "REFUSED AUTH", "REFUSED LIMIT", "REFUSED QUOTA", "UPSTREAM 2XX", "UPSTREAM 4XX", "UPSTREAM 5XX"]
    var cells: [String] {
        [date] + [allowed, refusedAuth, refusedLimit, refusedQuota, upstream2xx, upstream4xx, upstream5xx].map(String.init)
    }
}

extension RotatedKey: TableRepresentable {
    static let columns = ["KEY ID", "START", "PREVIOUS KEY ID", "PREVIOUS KEY EXPIRES AT"]
    var cells: [String] { [keyID, start + "…", previousKeyID, Table.time(previousKeyExpiresAt, none: "-")] }
}

extension RevokedKey: TableRepresentable {
    static let columns = ["KEY ID", "STATUS"]
    var cells: [String] { [keyID, status] }
}

extension SessionRevocation: TableRepresentable {
    static let columns = ["USER ID", "REVOKED AT"]
    var cells: [String] { [userID, Table.time(revokedAt)] }
}

extension AuditEntry: TableRepresentable {
    static let columns = ["ID", "SEQ", "AT", "ACTOR", "ACTOR ID", "ACTION", "TARGET", "SOURCE", "NOTE"]
    var cells: [String] {
        [id, seq.map(String.init) ?? "-", Table.time(at), actor, actorID ?? "-", action, target, source, (note ?? "").isEmpty ? "-" : note!]
    }
}

extension AdminInfo: TableRepresentable {
    static let columns = ["ADMIN ID", "NAME", "ROLE", "STATUS", "START", "CREATED AT", "EXPIRES AT", "CREATED BY"]
    var cells: [String] { [adminID, name, role, status, start + "…", Table.time(createdAt), Table.time(expiresAt), createdBy] }
}

extension CreatedAdmin: TableRepresentable {
    // The token itself is printed below the table, on its own line, to be copied whole.
    static let columns = ["ADMIN ID", "NAME", "ROLE", "EXPIRES AT"]
    var cells: [String] { [adminID, name, role, Table.time(expiresAt)] }
}

extension RevokedAdmin: TableRepresentable {
    static let columns = ["ADMIN ID", "STATUS"]
    var cells: [String] { [adminID, status] }
}

extension ErasedUser: TableRepresentable {
    static let columns = ["USER ID", "ERASED AT"]
    var cells: [String] { [userID, Table.time(erasedAt)] }
}

extension FoundUser: TableRepresentable {
    static let columns = ["USER ID", "PHONE", "CREATED AT", "LIVE SESSIONS"]
    var cells: [String] { [userID, phone, Table.time(createdAt), String(liveSessions)] }
}

extension LoginSession: TableRepresentable {
    static let columns = ["SESSION ID", "CHANNEL", "PARTNER ID", "CREATED AT", "LAST REFRESHED AT", "EXPIRES AT"]
    var cells: [String] { [sessionID, channel, partnerID ?? "-", Table.time(createdAt), Table.time(lastRefreshedAt), Table.time(expiresAt)] }
}

extension RevokedSession: TableRepresentable {
    static let columns = ["USER ID", "SESSION ID", "REVOKED AT"]
    var cells: [String] { [userID, sessionID, Table.time(revokedAt)] }
}
