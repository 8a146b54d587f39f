import Foundation

/// A personal admin credential as stored: who it belongs to, its role and lifetime, and the
/// hash of its current secret (never the secret).
public struct AdminRecord: Sendable, Equatable {
    public enum Status: String, Sendable {
        case active, revoked, expired
    }

    /// `adm_` and 16 hex characters; what the audit trail records next to the name.
    public let id: String
    public let name: String
    public let role: AdminRole
    /// `active` or `revoked` as stored; ``status(at:)`` also tells `expired`.
    public var storedStatus: Status
    public let createdAt: Date
    public var expiresAt: Date?
    /// `pga_live_` and the first 4 secret characters of the current secret.
    public var start: String
    /// SHA-256 of the current secret.
    public var tokenHash: String
    /// The id of the credential that created this one (`root` for the break-glass token).
    public let createdBy: String
    /// Counts the changes made to the record: what `If-Match` compares.
    public var revision = 1

    public func status(at now: Date) -> Status {
        if storedStatus == .active, let expiresAt, expiresAt <= now { return .expired }
        return storedStatus
    }
}
