/// A record that can be a row of a ``Table``; the conformances below decide what each
/// command shows in table mode (the JSON output always has every field).
protocol TableRepresentable {
    static var columns: [String] { get }
    var cells: [String] { get }
}

extension Table {
    init<Record: TableRepresentable>(_ records: [Record]) {
        self.init(columns: Record.columns, rows: records.map(\.cells))
    }
}

extension Partner: TableRepresentable {
    static let columns = ["PARTNER ID", "NAME", "STATUS", "RATE/S", "BURST", "SCOPES", "CREATED AT"]
    var cells: [String] {
        [partnerID, name, status, Self.format(rateLimit.rate), String(rateLimit.burst), scopes.joined(separator: ","), createdAt]
    }

    /// `50`, not `50.0`; fractional rates as they are.
    static func format(_ rate: Double) -> String {
        rate == rate.rounded() && abs(rate) < 1e15 ? String(Int64(rate)) : String(rate)
    }
}

extension KeyRecord: TableRepresentable {
    static let columns = ["KEY ID", "STATUS", "SCOPES", "CREATED AT", "EXPIRES AT", "LAST USED AT"]
    var cells: [String] {
        [keyID, status, scopes.joined(separator: ","), createdAt, expiresAt ?? "never", lastUsedAt ?? "never"]
    }
}

extension CreatedKey: TableRepresentable {
    // The key itself is printed below the table, on its own line, to be copied whole.
    static let columns = ["KEY ID", "PARTNER ID", "SCOPES", "CREATED AT", "EXPIRES AT"]
    var cells: [String] {
        [keyID, partnerID, scopes.joined(separator: ","), createdAt, expiresAt ?? "never"]
    }
}

extension RotatedKey: TableRepresentable {
    static let columns = ["KEY ID", "PREVIOUS KEY ID", "PREVIOUS KEY EXPIRES AT"]
    var cells: [String] { [keyID, previousKeyID, previousKeyExpiresAt ?? "-"] }
}

extension RevokedKey: TableRepresentable {
    static let columns = ["KEY ID", "STATUS"]
    var cells: [String] { [keyID, status] }
}

extension SessionRevocation: TableRepresentable {
    static let columns = ["USER ID", "REVOKED AT"]
    var cells: [String] { [userID, revokedAt] }
}

extension AuditEntry: TableRepresentable {
    static let columns = ["AT", "ACTOR", "ACTION", "TARGET", "SOURCE"]
    var cells: [String] { [at, actor ?? "-", action, target, source ?? "-"] }
}
